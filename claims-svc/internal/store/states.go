package store

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

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

// StateID is the _id of a claim's gen-th state: <claim>|<gen>, so that a claim's states are one
// range in the order of their generations.
func StateID(claimID string, gen int) string { return mongox.Key(claimID, mongox.Seq(int64(gen))) }

// InsertState records a change of status; ErrTaken when another writer recorded that
// generation first.
func (s *Store) InsertState(ctx context.Context, st *State) error {
	return mongox.Insert(ctx, s.c(States), st)
}

// CurrentState returns a claim's latest state; ok is false while it has none (pending). One find:
// the last of the claim's range.
func (s *Store) CurrentState(ctx context.Context, claimID string) (st State, ok bool, err error) {
	got, err := mongox.Find[State](ctx, s.c(States), mongox.Range{Scope: mongox.Scope(claimID), Desc: true, Limit: 1})
	if err != nil {
		return State{}, false, fmt.Errorf("read state: %w", err)
	}
	if len(got) == 0 {
		return State{}, false, nil
	}
	return got[0], true, nil
}

// readers bounds the finds one request sends at once.
const readers = 16

// CurrentStates returns the latest state of each of the given claims that has one: one find per
// claim, a few at once.
func (s *Store) CurrentStates(ctx context.Context, claimIDs []string) (map[string]State, error) {
	states := make([]*State, len(claimIDs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readers)
	for i, id := range claimIDs {
		g.Go(func() error {
			st, ok, err := s.CurrentState(gctx, id)
			if ok {
				states[i] = &st
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := make(map[string]State, len(claimIDs))
	for i, st := range states {
		if st != nil {
			out[claimIDs[i]] = *st
		}
	}
	return out, nil
}
