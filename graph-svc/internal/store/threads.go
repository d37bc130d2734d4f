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
			if _, _, err := appendOnceTo(ctx, s, threadsList(p), t.ID, t.ID); err != nil {
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

func threadsList(objectID string) string { return "threads:" + objectID }

// ThreadsPage reads up to limit ids of the threads an object takes part in, newest first.
func (s *Store) ThreadsPage(ctx context.Context, objectID string, limit int) ([]string, error) {
	es, _, err := mongox.Page[string](ctx, s.Log(), threadsList(objectID), 0, limit)
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.Value)
	}
	return out, err
}
