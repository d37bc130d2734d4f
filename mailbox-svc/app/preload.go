package app

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

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
// data-scale benchmark), never part of serving.
type Preloader struct{ st *store.Store }

// NewPreloader returns a preloader of the database db; it remembers the objects whose hash records
// it stored.
func NewPreloader(db *mongo.Database) *Preloader { return &Preloader{st: store.New(db)} }

// Load writes threads (in order of their latest activity, none stored yet) as sends and the lists
// projection would have left them (store.PreloadThreads), in bulk.
func (p *Preloader) Load(ctx context.Context, threads []PreloadThread) error {
	st := p.st
	ts := make([]store.Thread, len(threads))
	msgs := make([][]store.Message, len(threads))
	for i, pt := range threads {
		for _, o := range pt.Participants {
			if err := st.RememberHash(ctx, o.ObjectID, o.Hash); err != nil { // once per object and store
				return err
			}
		}
		ts[i] = store.Thread{ID: pt.ID, Participants: []string{pt.Participants[0].ObjectID, pt.Participants[1].ObjectID},
			Admission: "open", Status: "open"}
		for _, m := range pt.Messages {
			msgs[i] = append(msgs[i], store.Message{ID: m.ID, ThreadID: pt.ID, FromID: m.FromID, ToID: m.ToID, Kind: "note", Body: m.Body, CreatedAt: m.At})
		}
		if len(pt.Messages) > 0 {
			ts[i].CreatedAt = pt.Messages[0].At
		}
	}
	return st.PreloadThreads(ctx, ts, msgs)
}
