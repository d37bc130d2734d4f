package store

import (
	"context"
	"fmt"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// Thread is a thread graph-svc keeps a graph for: a mailbox thread, whose two participants never
// change once it exists, or an owner's self-ingest thread (Self, one participant: OwnerID).
type Thread struct {
	ID           string    `bson:"_id"`
	Participants []string  `bson:"participants"`
	Self         bool      `bson:"self,omitempty"`
	OwnerID      string    `bson:"owner_id,omitempty"`
	CreatedAt    time.Time `bson:"created_at"`
}

// RecordThreads records threads once each, in one command, without listing them: the caller
// lists them (AppendMessages does, with the thread's messages). It reports which threads it
// recorded now (the others were known).
func (s *Store) RecordThreads(ctx context.Context, ts []Thread) ([]bool, error) {
	added, err := mongox.InsertNew(ctx, s.c(Threads), ts)
	if err != nil {
		return nil, fmt.Errorf("store threads: %w", err)
	}
	return added, nil
}

// threadEntries are the entries of a thread in its participants' thread lists.
func threadEntries(t Thread) []listDoc[string] {
	out := make([]listDoc[string], len(t.Participants))
	for i, p := range t.Participants {
		out[i] = listDoc[string]{ID: threadsScope(p) + mongox.Key(mongox.Time(t.CreatedAt), keyText(t.ID)), At: t.CreatedAt, V: t.ID}
	}
	return out
}

// AddThread records a thread once and, when it is new, lists it in its participants' thread
// lists (ThreadsPage), in one insert more; a thread already known is left as it is.
func (s *Store) AddThread(ctx context.Context, t *Thread) error {
	added, err := s.RecordThreads(ctx, []Thread{*t})
	if err != nil || !added[0] {
		return err
	}
	if _, err := mongox.InsertNew(ctx, s.c(Lists), threadEntries(*t)); err != nil {
		return fmt.Errorf("store lists: %w", err)
	}
	return nil
}

// Thread reads a thread; mongox.ErrNotFound if graph-svc does not know it.
func (s *Store) Thread(ctx context.Context, id string) (*Thread, error) {
	return byID[Thread](ctx, s, Threads, id)
}

func threadsScope(objectID string) string { return mongox.Scope("t", keyText(objectID)) }

// ThreadsPage reads up to limit ids of the threads an object takes part in, newest first: one
// find.
func (s *Store) ThreadsPage(ctx context.Context, objectID string, limit int) ([]string, error) {
	items, _, err := newest[string](ctx, s, threadsScope(objectID), "", limit)
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.Value)
	}
	return out, err
}
