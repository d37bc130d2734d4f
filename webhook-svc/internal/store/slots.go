package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// Slot is one place of a quota: the n-th place of scope is the document _id "<scope>#<n>", and a
// subscription holds it by inserting it. An insert with a unique _id happens once, even on
// FerretDB (no transactions), so two creates racing for the last place cannot both get in, as
// they could by counting and then inserting. Places bound what a caller creates; they are not
// how subscriptions are found (lists.go).
type Slot struct {
	ID             string    `bson:"_id"`
	SubscriptionID string    `bson:"subscription_id"`
	At             time.Time `bson:"at"`
}

// Place is the number of the place sl holds.
func (sl Slot) Place() int {
	n, _ := strconv.Atoi(sl.ID[strings.LastIndexByte(sl.ID, '#')+1:])
	return n
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

// SlotsOf returns the held places 1..limit of scope, in place order: one find by their ids. It
// serves a create that found its quota full, to free the places whose subscription is gone.
func (s *Store) SlotsOf(ctx context.Context, scope string, limit int) ([]Slot, error) {
	ids := make([]string, limit)
	for i := range ids {
		ids[i] = SlotID(scope, i+1)
	}
	found, err := mongox.FindIn[Slot](ctx, s.c(Slots), ids)
	if err != nil {
		return nil, fmt.Errorf("read places of %s: %w", scope, err)
	}
	slices.SortFunc(found, func(a, b Slot) int { return a.Place() - b.Place() })
	return found, nil
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
