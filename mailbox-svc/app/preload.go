package app

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"golang.org/x/sync/errgroup"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
)

// PreloadObject is an object the preloaded threads name, with its current hash.
type PreloadObject struct{ ObjectID, Hash string }

// PreloadMessage is a message of a preloaded thread.
type PreloadMessage struct {
	ID, FromID, ToID, Body string
	At                     time.Time
}

// PreloadThread is a thread to preload: its participants (the first sender first) and its
// messages, oldest first.
type PreloadThread struct {
	ID           string
	Participants [2]PreloadObject
	Messages     []PreloadMessage
}

// preloadWorkers is how many threads Preload writes at once.
const preloadWorkers = 8

// Preload writes threads into mailbox-svc's database db as sends and the lists projection would
// have left them (store.PreloadThread), several threads at once. It is for loading a store
// quickly (the data-scale benchmark), never part of serving.
func Preload(ctx context.Context, db *mongo.Database, threads []PreloadThread) error {
	st := store.New(db)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(preloadWorkers)
	for _, pt := range threads {
		g.Go(func() error {
			for _, o := range pt.Participants {
				if err := st.RememberHash(gctx, o.ObjectID, o.Hash); err != nil {
					return err
				}
			}
			t := &store.Thread{ID: pt.ID, Participants: []string{pt.Participants[0].ObjectID, pt.Participants[1].ObjectID},
				Admission: "open", Status: "open"}
			msgs := make([]store.Message, len(pt.Messages))
			for i, m := range pt.Messages {
				msgs[i] = store.Message{ID: m.ID, ThreadID: pt.ID, FromID: m.FromID, ToID: m.ToID, Kind: "note", Body: m.Body, CreatedAt: m.At}
			}
			if len(msgs) > 0 {
				t.CreatedAt = msgs[0].CreatedAt
			}
			return st.PreloadThread(gctx, t, msgs)
		})
	}
	return g.Wait()
}
