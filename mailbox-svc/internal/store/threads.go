package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// Layout is the data layout the threads written by this release are in: their messages keyed by
// sequence and their mailbox entries keyed by time. A thread without it was written by an older
// release and is carried over once (UpgradeThread) before it is written or read.
const Layout = 2

// Thread is one relationship's conversation. Participants are object ids, the first sender
// first; hashes are looked up when a thread is shown, because a hash can change.
//
// The Last* fields describe the thread's latest message as its sends recorded it. They are hints:
// on FerretDB two sends of one instant may each rewrite the document from what they read, and
// leave the earlier of the two. A send that finds its hint taken reads the thread's true last
// message (LastMessage) instead, so a stale hint costs a read, never a wrong count.
type Thread struct {
	ID           string    `bson:"_id"`
	Participants []string  `bson:"participants"`
	Admission    string    `bson:"participant_admission"`
	Status       string    `bson:"status"`
	CreatedAt    time.Time `bson:"created_at"`
	Layout       int       `bson:"layout"`
	// LastMessageAt is the time of the latest message: its mailbox entries are keyed by it.
	LastMessageAt time.Time `bson:"last_message_at"`
	LastMessageID string    `bson:"last_message_id,omitempty"`
	// LastSeq is the sequence of the latest message (the thread's message count), LastFirst how
	// many of the messages up to it were sent to the first participant (Message.First).
	LastSeq   int64 `bson:"last_seq"`
	LastFirst int64 `bson:"last_first"`
}

// Has reports whether objectID takes part in the thread.
func (t *Thread) Has(objectID string) bool { return slices.Contains(t.Participants, objectID) }

// Between reports whether participants are objects a and b.
func Between(participants []string, a, b string) bool {
	return len(participants) == 2 && slices.Contains(participants, a) && slices.Contains(participants, b)
}

// Boxes are the objects whose mailboxes list the thread: both participants, or the one of a
// thread with itself (a notice).
func (t *Thread) Boxes() []string {
	if len(t.Participants) == 2 && t.Participants[0] == t.Participants[1] {
		return t.Participants[:1]
	}
	return t.Participants
}

// Inbound is how many of the first seq messages of the thread were sent to viewerID, first of
// them to the first participant: every message of a thread with itself is inbound.
func (t *Thread) Inbound(viewerID string, seq, first int64) int64 {
	switch {
	case len(t.Participants) < 2 || t.Participants[0] == t.Participants[1]:
		return seq
	case viewerID == t.Participants[0]:
		return first
	default:
		return seq - first
	}
}

// InsertThread stores a new thread; false if one with its id exists.
func (s *Store) InsertThread(ctx context.Context, t *Thread) (bool, error) {
	t.Layout = Layout
	created, err := insertOnce(ctx, s.threads, t)
	if err == nil {
		s.participants.Add(t.ID, slices.Clone(t.Participants))
	}
	return created, err
}

// Participants returns the participants of a thread; mongox.ErrNotFound if there is none. A
// thread's participants never change, so they are read from the store once per process.
func (s *Store) Participants(ctx context.Context, id string) ([]string, error) {
	if p, ok := s.participants.Get(id); ok {
		return p, nil
	}
	if !ValidID(id) {
		return nil, mongox.ErrNotFound
	}
	var t Thread
	err := mongox.FindOne(ctx, s.threads, mongox.ByID(id), &t, options.FindOne().SetProjection(bson.D{{Key: "participants", Value: 1}}))
	if err != nil {
		return nil, err
	}
	s.participants.Add(id, t.Participants)
	return t.Participants, nil
}

// Thread returns a thread by id, carried over to this release's layout if an older one wrote it;
// mongox.ErrNotFound if there is none.
func (s *Store) Thread(ctx context.Context, id string) (*Thread, error) {
	if !ValidID(id) {
		return nil, mongox.ErrNotFound
	}
	var t Thread
	if err := mongox.FindOne(ctx, s.threads, mongox.ByID(id), &t); err != nil {
		return nil, err
	}
	if t.Layout < Layout {
		return s.UpgradeThread(ctx, &t)
	}
	return &t, nil
}

// RecordMessage records m as the thread's latest message, and reopens the thread, unless a later
// message is recorded already (a send that finished first). It is the threads' hint (see Thread).
func (s *Store) RecordMessage(ctx context.Context, m *Message, status string) error {
	_, err := s.threads.UpdateOne(ctx,
		bson.D{{Key: "_id", Value: m.ThreadID}, {Key: "last_seq", Value: bson.D{{Key: "$lt", Value: m.Seq}}}},
		bson.D{{Key: "$set", Value: bson.D{
			{Key: "status", Value: status}, {Key: "last_message_at", Value: m.CreatedAt}, {Key: "last_message_id", Value: m.ID},
			{Key: "last_seq", Value: m.Seq}, {Key: "last_first", Value: m.First},
		}}})
	if err != nil {
		return fmt.Errorf("store threads: %w", err)
	}
	return nil
}

// SetThreadStatus sets a thread's status and returns the thread as it was before.
func (s *Store) SetThreadStatus(ctx context.Context, id, status string) (*Thread, error) {
	var before Thread
	err := s.threads.FindOneAndUpdate(ctx, mongox.ByID(id), bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: status}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.Before)).Decode(&before)
	if mongox.IsNotFound(err) {
		return nil, mongox.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store threads: %w", err)
	}
	return &before, nil
}
