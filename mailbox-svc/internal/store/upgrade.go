package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
)

// layoutUpgrade is the marker of Upgrade in the migrations collection.
const layoutUpgrade = "layout-v2"

// upgradeBatch is how many documents the upgrade reads or inserts at once.
const upgradeBatch = 256

type migration struct {
	ID     string    `bson:"_id"`
	DoneAt time.Time `bson:"done_at"`
}

// oldMessage is a message as the release before Layout stored it: by id, in a collection of
// its own, with its position in the thread's list once that was logged (0 until then).
type oldMessage struct {
	ID        string     `bson:"_id"`
	ThreadID  string     `bson:"thread_id"`
	FromID    string     `bson:"from_id"`
	ToID      string     `bson:"to_id"`
	Kind      string     `bson:"kind"`
	Body      string     `bson:"body"`
	CreatedAt time.Time  `bson:"created_at"`
	Signature *Signature `bson:"signature,omitempty"`
	Seq       int64      `bson:"seq"`
}

// oldRead is a read receipt as the release before Layout stored it: one per message.
type oldRead struct {
	MessageID string    `bson:"_id"`
	ReaderID  string    `bson:"reader_id"`
	ReadAt    time.Time `bson:"read_at"`
}

// Upgrade carries every thread written by an older release over to Layout (UpgradeThread), once
// per database: a marker in migrations says it was done. A thread that a request meets first is
// carried over by that request, so the service serves meanwhile; this makes sure every mailbox
// lists all its threads. It reads the threads with a cursor in batches, so its memory does not
// grow with the store, and reports the threads it carried over.
func (s *Store) Upgrade(ctx context.Context) (int, error) {
	err := mongox.FindOne(ctx, s.migrations, mongox.ByID(layoutUpgrade), &migration{})
	switch {
	case err == nil:
		return 0, nil
	case !errors.Is(err, mongox.ErrNotFound):
		return 0, fmt.Errorf("read migration marker: %w", err)
	}
	n := 0
	err = mongox.Each(ctx, s.threads, bson.D{{Key: "layout", Value: bson.D{{Key: "$ne", Value: Layout}}}}, nil, func(t Thread) error {
		n++
		_, err := s.UpgradeThread(ctx, &t)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("carry threads over: %w", err)
	}
	if err := mongox.InsertOnce(ctx, s.migrations, migration{ID: layoutUpgrade, DoneAt: time.Now()}); err != nil {
		return n, fmt.Errorf("write migration marker: %w", err)
	}
	return n, nil
}

// UpgradeThread carries thread t, written by an older release, over to Layout and returns it as
// it then is: its messages (ImportThread) in the order the older release listed them (their
// position in its list, then their time), with its read receipts. A send waits for this before
// it numbers its message. The cost is the thread's length, once.
func (s *Store) UpgradeThread(ctx context.Context, t *Thread) (*Thread, error) {
	old, err := mongox.FindAll[oldMessage](ctx, s.oldMessages, bson.D{{Key: "thread_id", Value: t.ID}})
	if err != nil {
		return nil, fmt.Errorf("upgrade %s: %w", t.ID, err)
	}
	sort.SliceStable(old, func(i, j int) bool {
		a, b := old[i], old[j]
		if (a.Seq == 0) != (b.Seq == 0) {
			return a.Seq != 0 // listed ones first
		}
		if a.Seq != b.Seq {
			return a.Seq < b.Seq
		}
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.Before(b.CreatedAt)
		}
		return a.ID < b.ID
	})
	msgs := make([]Message, len(old))
	for i, m := range old {
		msgs[i] = Message{ID: m.ID, ThreadID: t.ID, FromID: m.FromID, ToID: m.ToID, Kind: m.Kind, Body: m.Body, CreatedAt: m.CreatedAt, Signature: m.Signature}
	}
	receipts, err := mongox.FindAll[oldRead](ctx, s.oldReads, bson.D{{Key: "thread_id", Value: t.ID}})
	if err != nil {
		return nil, fmt.Errorf("upgrade reads of %s: %w", t.ID, err)
	}
	readAt := map[string]time.Time{}
	for _, r := range receipts {
		readAt[r.MessageID] = r.ReadAt
	}
	return s.ImportThread(ctx, t, msgs, readAt)
}

// ImportThread stores thread t with msgs, its messages oldest first (ids and times set), as
// sends would have: numbered in that order and linked, read at readAt (by message id; nil for
// none), the thread at its place in its participants' mailboxes. It writes in bulk, keyed by the
// data, so a repeated or concurrent import of the same thread writes the same documents; the
// thread itself is stored, or marked as carried over, last. The upgrade carries older threads
// over with it; nothing else may write the thread meanwhile.
func (s *Store) ImportThread(ctx context.Context, t *Thread, msgs []Message, readAt map[string]time.Time) (*Thread, error) {
	var docs []any
	var first int64
	prev := ""
	for i := range msgs {
		m := &msgs[i]
		m.ThreadID, m.Seq, m.Prev, m.Key = t.ID, int64(i+1), prev, MessageKey(t.ID, int64(i+1))
		if len(t.Participants) > 0 && m.ToID == t.Participants[0] {
			first++
		}
		m.First, prev = first, m.ID
		docs = append(docs, m, MessageRef{Key: messageRefKey(m.ID), ThreadID: t.ID, Seq: m.Seq})
	}
	if _, err := mongox.InsertNewInBatches(ctx, s.messages, docs, upgradeBatch); err != nil {
		return nil, fmt.Errorf("import %s: %w", t.ID, err)
	}
	if err := s.importReads(ctx, t, msgs, readAt); err != nil {
		return nil, err
	}
	up := *t
	up.Layout = Layout
	if n := len(msgs); n > 0 {
		last := msgs[n-1]
		up.LastSeq, up.LastFirst, up.LastMessageID, up.LastMessageAt = last.Seq, last.First, last.ID, last.CreatedAt
		if _, err := mongox.InsertNew(ctx, s.mailboxes, BoxEntries(&up, up.Status, up.LastMessageAt, up.LastSeq, up.LastFirst)); err != nil {
			return nil, fmt.Errorf("import %s: %w", t.ID, err)
		}
	}
	created, err := insertOnce(ctx, s.threads, &up)
	if err != nil || created {
		return &up, err
	}
	_, err = s.threads.UpdateOne(ctx, bson.D{{Key: "_id", Value: t.ID}, {Key: "layout", Value: bson.D{{Key: "$ne", Value: Layout}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "layout", Value: Layout}, {Key: "last_seq", Value: up.LastSeq}, {Key: "last_first", Value: up.LastFirst},
			{Key: "last_message_id", Value: up.LastMessageID}, {Key: "last_message_at", Value: up.LastMessageAt}}}})
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", t.ID, err)
	}
	return &up, nil
}

// importReads writes the read states of a thread's messages read at readAt: runs of a reader's
// messages read at the same time make one span.
func (s *Store) importReads(ctx context.Context, t *Thread, msgs []Message, readAt map[string]time.Time) error {
	if len(readAt) == 0 {
		return nil
	}
	var states []ReadState
	for _, reader := range t.Boxes() {
		st := ReadState{Key: ReadStateKey(reader, t.ID), ReaderID: reader, ThreadID: t.ID, Version: 1}
		var lastInbound int64 // the reader's message before this one, read or not
		for _, m := range msgs {
			if m.ToID != reader {
				continue
			}
			at, read := readAt[m.ID]
			before := lastInbound
			lastInbound = m.Seq
			if !read {
				continue
			}
			st.Read++
			if n := len(st.Spans); n > 0 && st.Spans[n-1].At.Equal(at) && st.Spans[n-1].To == before {
				st.Spans[n-1].To, st.Spans[n-1].N = m.Seq, st.Spans[n-1].N+1
				continue
			}
			st.Spans = append(st.Spans, ReadSpan{From: m.Seq, To: m.Seq, At: at, N: 1})
		}
		if st.Read > 0 {
			states = append(states, st)
		}
	}
	if _, err := mongox.InsertNew(ctx, s.readStates, states); err != nil {
		return fmt.Errorf("import reads of %s: %w", t.ID, err)
	}
	return nil
}
