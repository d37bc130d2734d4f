package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// State is one change of a claim's status (verified or lapsed). A claim without states is
// pending. States of a claim are numbered from 1; the highest is the current one.
type State struct {
	ID       string    `bson:"_id"` // StateID(claim, gen)
	ClaimID  string    `bson:"claim_id"`
	ObjectID string    `bson:"object_id"`
	Gen      int       `bson:"gen"`
	Status   string    `bson:"status"`
	At       time.Time `bson:"at"`
	// VerifiedAt is when the claim was last verified (kept on a lapse, for the record).
	VerifiedAt time.Time `bson:"verified_at"`
	Events     []string  `bson:"_events"`
}

// StateID is the _id of a claim's gen-th state.
func StateID(claimID string, gen int) string { return fmt.Sprintf("%s/%06d", claimID, gen) }

// InsertState records a change of status; ErrTaken when another writer recorded that
// generation first.
func (s *Store) InsertState(ctx context.Context, st *State) error { return s.insert(ctx, States, st) }

// CurrentStates returns the latest state of each of the given claims that has one.
func (s *Store) CurrentStates(ctx context.Context, claimIDs []string) (map[string]State, error) {
	return s.current(ctx, bson.D{{Key: "claim_id", Value: bson.D{{Key: "$in", Value: claimIDs}}}})
}

// CurrentStatesOf returns the latest state of each claim of an object that has one.
func (s *Store) CurrentStatesOf(ctx context.Context, objectID string) (map[string]State, error) {
	return s.current(ctx, bson.D{{Key: "object_id", Value: objectID}})
}

// AllCurrentStates returns the latest state of every claim that has one.
func (s *Store) AllCurrentStates(ctx context.Context) (map[string]State, error) {
	return s.current(ctx, bson.D{})
}

func (s *Store) current(ctx context.Context, filter bson.D) (map[string]State, error) {
	all, err := mongox.FindAll[State](ctx, s.c(States), filter, mopts.Find().SetSort(bson.D{{Key: "claim_id", Value: 1}, {Key: "gen", Value: 1}}))
	if err != nil {
		return nil, err
	}
	out := make(map[string]State, len(all))
	for _, st := range all {
		if cur, ok := out[st.ClaimID]; !ok || st.Gen > cur.Gen {
			out[st.ClaimID] = st
		}
	}
	return out, nil
}
