package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
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

// stateHead is a hint of a claim's current generation, written after each new state. Concurrent
// writers may leave it behind (FerretDB rewrites a document as a whole), so readers step forward
// from it to the last state that exists: a few point reads, whatever the claim's history.
type stateHead struct {
	ID  string `bson:"_id"`
	Gen int    `bson:"gen"`
}

// StateID is the _id of a claim's gen-th state.
func StateID(claimID string, gen int) string { return fmt.Sprintf("%s/%06d", claimID, gen) }

// InsertState records a change of status; ErrTaken when another writer recorded that
// generation first.
func (s *Store) InsertState(ctx context.Context, st *State) error {
	if err := s.insert(ctx, States, st); err != nil {
		return err
	}
	s.advanceState(ctx, st.ClaimID, st.Gen)
	return nil
}

// advanceState moves a claim's head hint to gen. A failure only leaves the hint behind, which
// readers step over, so it is not reported.
func (s *Store) advanceState(ctx context.Context, claimID string, gen int) {
	_ = mongox.Upsert(ctx, s.c(States), stateHeadID(claimID), bson.D{{Key: "$max", Value: bson.D{{Key: "gen", Value: gen}}}})
}

// CurrentState returns a claim's latest state; ok is false while it has none (pending).
func (s *Store) CurrentState(ctx context.Context, claimID string) (st State, ok bool, err error) {
	var head stateHead
	if err := mongox.FindOne(ctx, s.c(States), mongox.ByID(stateHeadID(claimID)), &head); err != nil && !errors.Is(err, mongox.ErrNotFound) {
		return State{}, false, fmt.Errorf("read state head: %w", err)
	}
	gen := head.Gen
	for {
		var next State
		err := mongox.FindOne(ctx, s.c(States), mongox.ByID(StateID(claimID, gen+1)), &next)
		if errors.Is(err, mongox.ErrNotFound) {
			break
		}
		if err != nil {
			return State{}, false, fmt.Errorf("read state: %w", err)
		}
		gen, st, ok = gen+1, next, true
	}
	if ok || gen == 0 {
		return st, ok, nil
	}
	if err := mongox.FindOne(ctx, s.c(States), mongox.ByID(StateID(claimID, gen)), &st); err != nil {
		return State{}, false, fmt.Errorf("read state: %w", err)
	}
	return st, true, nil
}

// CurrentStates returns the latest state of each of the given claims that has one.
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
