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

// Preloader loads threads into mailbox-svc's database, for loading a store quickly (the
// data-scale benchmark), never part of serving. It writes through the store's public API
// (store.ImportThread, which also carries older threads over), so what it loads is what sends
// would have left.
type Preloader struct{ st *store.Store }

// NewPreloader returns a preloader of the database db; it remembers the objects whose hash records
// it stored.
func NewPreloader(db *mongo.Database) *Preloader { return &Preloader{st: store.New(db)} }

// preloadWorkers bounds the threads Load writes at once.
const preloadWorkers = 16

// Load writes threads (none stored yet) with their messages, unread.
func (p *Preloader) Load(ctx context.Context, threads []PreloadThread) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(preloadWorkers)
	for _, pt := range threads {
		for _, o := range pt.Participants {
			if err := p.st.RememberHash(ctx, o.ObjectID, o.Hash); err != nil { // once per object and store
				return err
			}
		}
		g.Go(func() error {
			t := &store.Thread{ID: pt.ID, Participants: []string{pt.Participants[0].ObjectID, pt.Participants[1].ObjectID},
				Admission: "open", Status: "open"}
			msgs := make([]store.Message, len(pt.Messages))
			for i, m := range pt.Messages {
				msgs[i] = store.Message{ID: m.ID, FromID: m.FromID, ToID: m.ToID, Kind: "note", Body: m.Body, CreatedAt: m.At}
			}
			if len(msgs) > 0 {
				t.CreatedAt = msgs[0].CreatedAt
			}
			_, err := p.st.ImportThread(gctx, t, msgs, nil)
			return err
		})
	}
	return g.Wait()
}
