package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// SubscriptionHealth is what the sender has learnt of a subscription's endpoint. It lives apart
// from the subscription so that the sender never rewrites what the owner writes (headers,
// secrets), and the owner never rewrites what the sender writes.
type SubscriptionHealth struct {
	ID             string     `bson:"_id"`                 // the subscription id
	ObjectID       string     `bson:"object_id,omitempty"` // the subscription's object, whose cached list it belongs to
	LastSuccessAt  *time.Time `bson:"last_success_at,omitempty"`
	LastFailureAt  *time.Time `bson:"last_failure_at,omitempty"`
	FailingSince   *time.Time `bson:"failing_since,omitempty"`
	DisabledAt     *time.Time `bson:"disabled_at,omitempty"`
	DisabledReason string     `bson:"disabled_reason,omitempty"`
	// Events are the ids of the events this write staged in the outbox (events.EventsField).
	Events []string `bson:"_events,omitempty"`
}

// Health returns a subscription's health; a subscription never delivered to has an empty one.
func (s *Store) Health(ctx context.Context, id string) (*SubscriptionHealth, error) {
	var h SubscriptionHealth
	err := mongox.FindOne(ctx, s.c(Health), mongox.ByID(id), &h)
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		return &SubscriptionHealth{ID: id}, nil
	case err != nil:
		return nil, fmt.Errorf("read health: %w", err)
	}
	return &h, nil
}

// Healths returns the health of each of the given subscriptions (an empty one for those never
// delivered to), in one find.
func (s *Store) Healths(ctx context.Context, ids []string) (map[string]*SubscriptionHealth, error) {
	found, err := mongox.FindIn[SubscriptionHealth](ctx, s.c(Health), ids)
	if err != nil {
		return nil, fmt.Errorf("read health: %w", err)
	}
	out := make(map[string]*SubscriptionHealth, len(ids))
	for _, id := range ids {
		out[id] = &SubscriptionHealth{ID: id}
	}
	for i := range found {
		out[found[i].ID] = &found[i]
	}
	return out, nil
}

// PutHealth writes a subscription's health.
func (s *Store) PutHealth(ctx context.Context, h *SubscriptionHealth) error {
	return s.replace(ctx, Health, h.ID, h)
}

// DeleteHealth deletes a deleted subscription's health.
func (s *Store) DeleteHealth(ctx context.Context, id string) error {
	if _, err := s.c(Health).DeleteOne(ctx, mongox.ByID(id)); err != nil {
		return fmt.Errorf("delete health: %w", err)
	}
	return nil
}
