package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// Slot is one place of a quota: the n-th place of scope is the document _id "<scope>#<n>", and a
// subscription holds it by inserting it. An insert with a unique _id happens once, even on
// FerretDB (no transactions), so two creates racing for the last place cannot both get in, as
// they could by counting and then inserting. Slots are found by _id point reads only.
type Slot struct {
	ID             string    `bson:"_id"`
	SubscriptionID string    `bson:"subscription_id"`
	At             time.Time `bson:"at"`
}

// SlotID names the n-th place (1-based) of scope.
func SlotID(scope string, n int) string { return fmt.Sprintf("%s#%d", scope, n) }

// TakeSlot inserts the first free place of scope among 1..limit, looking from start (wrapping
// around), for the subscription subID. It returns the place's id, or "" when every place is
// taken. It costs one insert per place it finds taken, at most limit.
func (s *Store) TakeSlot(ctx context.Context, scope string, limit, start int, subID string, at time.Time) (string, error) {
	for i := range limit {
		id := SlotID(scope, 1+(start+i)%limit)
		_, err := s.c(Slots).InsertOne(ctx, Slot{ID: id, SubscriptionID: subID, At: at})
		switch {
		case err == nil:
			return id, nil
		case !mongox.IsDuplicateKey(err):
			return "", fmt.Errorf("take %s: %w", id, err)
		}
	}
	return "", nil
}

// SlotAt returns the n-th place of scope, or nil when it is free.
func (s *Store) SlotAt(ctx context.Context, scope string, n int) (*Slot, error) {
	var sl Slot
	err := mongox.FindOne(ctx, s.c(Slots), mongox.ByID(SlotID(scope, n)), &sl)
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read slot: %w", err)
	}
	return &sl, nil
}

// ReleaseSlots frees places, each by a point delete.
func (s *Store) ReleaseSlots(ctx context.Context, ids ...string) error {
	for _, id := range ids {
		if _, err := s.c(Slots).DeleteOne(ctx, mongox.ByID(id)); err != nil {
			return fmt.Errorf("release %s: %w", id, err)
		}
	}
	return nil
}
