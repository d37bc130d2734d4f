package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
)

// Idempotency is the record of a send made with an Idempotency-Key. It is written before the
// send's documents and holds them, ids included: a retry, or a concurrent duplicate, writes the
// very same documents, whose unique ids let only one copy in.
type Idempotency struct {
	ID          string `bson:"_id"`
	Fingerprint string `bson:"fingerprint"`
	// Caller is who made the send (the caller's object, or an anonymous client's digest): the
	// only one a replay answers.
	Caller  string  `bson:"caller,omitempty"`
	Thread  *Thread `bson:"thread,omitempty"` // the thread the send opens, if it opens one
	Message Message `bson:"message"`
	// Events are the send's events, staged again by a resumed send.
	Events []events.Pending `bson:"events,omitempty"`
	// Done is set once every document is written; a replay then only answers.
	Done      bool      `bson:"done"`
	CreatedAt time.Time `bson:"created_at"`
	ExpiresAt time.Time `bson:"expires_at"`
}

// IdempotencyID scopes a key to its sender, so that two senders choosing the same key never meet.
func IdempotencyID(senderID, key string) string { return senderID + ":" + key }

// Idempotency returns the record of id; mongox.ErrNotFound if there is none.
func (s *Store) Idempotency(ctx context.Context, id string) (*Idempotency, error) {
	rec, err := byID[Idempotency](ctx, s.idempotency, id)
	if err != nil {
		return nil, err
	}
	if m := &rec.Message; m.ID == "" {
		m.ID, m.Key = m.Key, "" // recorded before data keys, when a message's _id was its id
	}
	return rec, nil
}

// BeginIdempotent stores rec unless a live record with its id exists; it returns the record that
// holds: rec itself, or the one stored first. An expired record not yet swept gives way.
func (s *Store) BeginIdempotent(ctx context.Context, rec *Idempotency) (*Idempotency, error) {
	for range 2 {
		created, err := insertOnce(ctx, s.idempotency, rec)
		if err != nil || created {
			return rec, err
		}
		prev, err := s.Idempotency(ctx, rec.ID)
		if errors.Is(err, mongox.ErrNotFound) {
			continue // swept meanwhile
		}
		if err != nil || !prev.ExpiresAt.Before(rec.CreatedAt) {
			return prev, err
		}
		_, err = s.idempotency.DeleteOne(ctx, bson.D{{Key: "_id", Value: rec.ID}, {Key: "expires_at", Value: prev.ExpiresAt}})
		if err != nil {
			return nil, fmt.Errorf("store idempotency keys: %w", err)
		}
	}
	return s.Idempotency(ctx, rec.ID)
}

// FinishIdempotent marks a record's send as completely written, with its message as written
// (its place in the thread and, when another send took the place first, its time).
func (s *Store) FinishIdempotent(ctx context.Context, id string, m *Message) error {
	_, err := s.idempotency.UpdateOne(ctx, mongox.ByID(id), bson.D{{Key: "$set", Value: bson.D{{Key: "done", Value: true}, {Key: "message", Value: m}}}})
	if err != nil {
		return fmt.Errorf("store idempotency keys: %w", err)
	}
	return nil
}

// SweepIdempotency deletes expired records (FerretDB has no TTL indexes).
func (s *Store) SweepIdempotency(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.idempotency.DeleteMany(ctx, bson.D{{Key: "expires_at", Value: bson.D{{Key: "$lt", Value: now}}}})
	if err != nil {
		return 0, fmt.Errorf("store idempotency keys: %w", err)
	}
	return res.DeletedCount, nil
}
