package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"golang.org/x/sync/errgroup"

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

// scopePlaces is how far the places of a scope may reach: the highest place any create or
// migration in it has looked at. Readers look at places 1..Places and no further, so that the
// subscriptions of an object are found by point reads bounded by its quotas, never by a query of
// the subscriptions collection.
type scopePlaces struct {
	ID     string `bson:"_id"`
	Places int    `bson:"places"`
}

func placesID(scope string) string { return scope + "#places" }

// OpenPlaces records that places 1..n of scope may be held, before a create looks for one of
// them. Once the scope is open that far it costs one point read. The record only grows: a lost
// update (FerretDB rewrites a document as a whole) is read back and written again.
func (s *Store) OpenPlaces(ctx context.Context, scope string, n int) error {
	for {
		var m scopePlaces
		err := mongox.FindOne(ctx, s.c(Slots), mongox.ByID(placesID(scope)), &m)
		switch {
		case err == nil && m.Places >= n:
			return nil
		case errors.Is(err, mongox.ErrNotFound):
			if err := mongox.InsertOnce(ctx, s.c(Slots), scopePlaces{ID: placesID(scope), Places: n}); err != nil {
				return fmt.Errorf("open %s: %w", scope, err)
			}
		case err != nil:
			return fmt.Errorf("read places of %s: %w", scope, err)
		default:
			if _, err := s.c(Slots).UpdateOne(ctx, mongox.ByID(placesID(scope)),
				bson.D{{Key: "$max", Value: bson.D{{Key: "places", Value: n}}}}, options.UpdateOne()); err != nil {
				return fmt.Errorf("open %s: %w", scope, err)
			}
		}
	}
}

// placeReaders bounds the point reads of one scope's places sent at once.
const placeReaders = 8

// Places returns the held places of scope, in place order: a point read of the scope's reach,
// then one per place within it.
func (s *Store) Places(ctx context.Context, scope string) ([]Slot, error) {
	var m scopePlaces
	err := mongox.FindOne(ctx, s.c(Slots), mongox.ByID(placesID(scope)), &m)
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		return []Slot{}, nil // no create ever looked in this scope
	case err != nil:
		return nil, fmt.Errorf("read places of %s: %w", scope, err)
	}
	found := make([]*Slot, m.Places)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(placeReaders)
	for i := range found {
		g.Go(func() error {
			var sl Slot
			err := mongox.FindOne(gctx, s.c(Slots), mongox.ByID(SlotID(scope, i+1)), &sl)
			switch {
			case errors.Is(err, mongox.ErrNotFound):
				return nil
			case err != nil:
				return fmt.Errorf("read slot: %w", err)
			}
			found[i] = &sl
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := []Slot{}
	for _, sl := range found {
		if sl != nil {
			out = append(out, *sl)
		}
	}
	return out, nil
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

// InsertPlaced stores new subscriptions with the places they hold and the reach of each scope
// they fill, in three bulk commands: for preloading a store (benchmarks), where the scopes are
// new and the places are counted by the caller.
func (s *Store) InsertPlaced(ctx context.Context, subs []*Subscription, places []Slot, reach map[string]int) error {
	marks := make([]scopePlaces, 0, len(reach))
	for scope, n := range reach {
		marks = append(marks, scopePlaces{ID: placesID(scope), Places: n})
	}
	if _, err := mongox.InsertNew(ctx, s.c(Slots), marks); err != nil {
		return fmt.Errorf("store reach: %w", err)
	}
	if _, err := mongox.InsertNew(ctx, s.c(Slots), places); err != nil {
		return fmt.Errorf("store places: %w", err)
	}
	if _, err := mongox.InsertNew(ctx, s.c(Subscriptions), subs); err != nil {
		return fmt.Errorf("store subscriptions: %w", err)
	}
	return nil
}
