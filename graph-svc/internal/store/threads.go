package store

import (
	"context"
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

// AddThreads records threads once each, in one command, and lists each new one in its
// participants' thread lists (ThreadsPage).
func (s *Store) AddThreads(ctx context.Context, ts []Thread) error {
	added, err := mongox.InsertNew(ctx, s.c(Threads), ts)
	if err != nil {
		return err
	}
	for i, t := range ts {
		if i < len(added) && !added[i] {
			continue
		}
		for _, p := range t.Participants {
			if err := s.put(ctx, threadsScope(p)+mongox.Key(mongox.Time(t.CreatedAt), keyText(t.ID)), t.CreatedAt, t.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// AddThread records a thread once; a thread already known is left as it is.
func (s *Store) AddThread(ctx context.Context, t *Thread) error {
	return s.AddThreads(ctx, []Thread{*t})
}

// Thread reads a thread; mongox.ErrNotFound if graph-svc does not know it.
func (s *Store) Thread(ctx context.Context, id string) (*Thread, error) {
	var t Thread
	if err := mongox.FindOne(ctx, s.c(Threads), mongox.ByID(id), &t); err != nil {
		return nil, err
	}
	return &t, nil
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
