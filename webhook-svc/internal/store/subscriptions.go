package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
)

// Kinds of subscription.
const (
	KindWebhook = "webhook" // an owner's webhook on its own object
	KindContext = "context" // a context subscription of any object to a watched box
)

// Subscription is an owner webhook or a context subscription. Secrets and header values are
// read only by the sender; no view ever returns them.
type Subscription struct {
	ID   string `bson:"_id"`
	Kind string `bson:"kind"`
	// ObjectID is the object whose events are delivered: the owner's own object for a webhook,
	// the watched box for a context subscription.
	ObjectID string `bson:"object_id"`
	// CreatorID is the object whose key created the subscription; HolderHash its hash then, which
	// names the mailbox told of the subscription's trouble.
	CreatorID   string            `bson:"creator_id"`
	HolderHash  string            `bson:"holder_hash,omitempty"`
	CallbackURL string            `bson:"callback_url"`
	Events      []string          `bson:"events"`
	Secrets     []Secret          `bson:"secrets"`
	Headers     map[string]string `bson:"headers,omitempty"`
	CreatedAt   time.Time         `bson:"created_at"`
	UpdatedAt   time.Time         `bson:"updated_at"`
	// DisabledAt is set while the owner has disabled the subscription. It lives here, written
	// only by the owner's requests, so that no outcome the sender records can undo it (the
	// sender disables in the health record).
	DisabledAt *time.Time `bson:"disabled_at,omitempty"`
	// Slots are the quota places the subscription holds (Slot), freed when it is deleted.
	Slots []string `bson:"slots,omitempty"`
}

// Secret is a signing secret; a rotated-away secret keeps signing until ExpiresAt.
type Secret struct {
	Value     string     `bson:"value"`
	CreatedAt time.Time  `bson:"created_at"`
	ExpiresAt *time.Time `bson:"expires_at,omitempty"`
}

// InsertSubscription stores a new subscription and puts it on its object's list.
func (s *Store) InsertSubscription(ctx context.Context, sub *Subscription) error {
	if _, err := s.c(Subscriptions).InsertOne(ctx, sub); err != nil {
		return fmt.Errorf("store subscription: %w", err)
	}
	return s.ListSubscription(ctx, sub)
}

// Subscription returns one subscription, or mongox.ErrNotFound.
func (s *Store) Subscription(ctx context.Context, id string) (*Subscription, error) {
	var sub Subscription
	if err := mongox.FindOne(ctx, s.c(Subscriptions), mongox.ByID(id), &sub); err != nil {
		return nil, fmt.Errorf("read subscription: %w", err)
	}
	return &sub, nil
}

// ReplaceSubscription rewrites a subscription (its owner's requests are its only writers).
func (s *Store) ReplaceSubscription(ctx context.Context, sub *Subscription) error {
	return s.replace(ctx, Subscriptions, sub.ID, sub)
}

// DeleteSubscription deletes a subscription and takes it off its object's list; its pending
// deliveries fail when they come due.
func (s *Store) DeleteSubscription(ctx context.Context, sub *Subscription) error {
	if _, err := s.c(Subscriptions).DeleteOne(ctx, mongox.ByID(sub.ID)); err != nil {
		return fmt.Errorf("delete subscription: %w", err)
	}
	if _, err := s.c(Lists).DeleteOne(ctx, mongox.ByID(listKey(sub))); err != nil {
		return fmt.Errorf("take subscription off its list: %w", err)
	}
	return nil
}

// EachSubscription hands fn every stored subscription, read with a cursor in batches (memory
// bounded by a batch, whatever the collection holds). It is for one-off migrations only: every
// request finds subscriptions by _id or through their lists.
func (s *Store) EachSubscription(ctx context.Context, fn func(*Subscription) error) error {
	if err := mongox.Each(ctx, s.c(Subscriptions), bson.D{}, nil, func(sub Subscription) error { return fn(&sub) }); err != nil {
		return fmt.Errorf("list subscriptions: %w", err)
	}
	return nil
}

// Disabled reports whether a subscription receives nothing: its owner or the sender disabled it.
func Disabled(sub *Subscription, h *SubscriptionHealth) bool {
	return sub.DisabledAt != nil || (h != nil && h.DisabledAt != nil)
}
