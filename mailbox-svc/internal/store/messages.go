package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
)

// Message is one message of a thread, stored once, under MessageKey(thread, seq): a thread's
// page is one range of these. Seq numbers a thread's messages from 1 without gaps, in the order
// their sends claimed them (InsertMessage), so the last one's Seq is the thread's count.
type Message struct {
	Key       string    `bson:"_id"`
	ID        string    `bson:"id"`
	ThreadID  string    `bson:"thread_id"`
	Seq       int64     `bson:"seq"`
	FromID    string    `bson:"from_id"`
	ToID      string    `bson:"to_id"`
	Kind      string    `bson:"kind"`
	Body      string    `bson:"body"`
	CreatedAt time.Time `bson:"created_at"`
	// Signature is the sender's verified signature of the message, nil for an unverified send.
	Signature *Signature `bson:"signature,omitempty"`
	// Prev is the id of the thread's message before this one ("" for the first).
	Prev string `bson:"prev,omitempty"`
	// First is how many of the thread's messages up to this one were sent to its first
	// participant, so that the last message also gives each participant's inbound count.
	First  int64    `bson:"first"`
	Events []string `bson:"_events,omitempty"`
}

// Signature is a verified detached JWS of a message and what it signed besides the message's
// own fields (docs/api.md, "Signed messages").
type Signature struct {
	JWS      string  `bson:"jws"`
	KID      string  `bson:"kid"`
	SignedAt string  `bson:"signed_at"`
	Nonce    string  `bson:"nonce"`
	ThreadID *string `bson:"thread_id"` // as signed: null for a send that opened its thread
	// Via is ViaHTTPSignature for a send whose request was signed (RFC 9421) rather than its
	// message: it has no JWS, and its nonce is the request signature's.
	Via string `bson:"via,omitempty"`
}

// ViaHTTPSignature marks a message verified by its request's HTTP message signature.
const ViaHTTPSignature = "http-message-signature"

// MessageRef points from a message's id to its place, for the reads that name a message by id
// (an A2A task) and for a resumed send, which must learn whether its message got in.
type MessageRef struct {
	Key      string `bson:"_id"`
	ThreadID string `bson:"thread_id"`
	Seq      int64  `bson:"seq"`
}

// MessageKey is the _id of a thread's message seq.
func MessageKey(threadID string, seq int64) string { return mongox.Key(threadID, mongox.Seq(seq)) }

// messageRefKey is the _id of the MessageRef of message id; its scope ("id") sorts apart from
// every thread id (thr_…).
func messageRefKey(id string) string { return mongox.Key("id", id) }

// ErrSeqTaken says that another message holds the sequence number a send tried.
var ErrSeqTaken = errors.New("store: the message's place in its thread is taken")

// InsertMessage stores m at its place (m.ThreadID, m.Seq) with its MessageRef, in one command
// (ordered: the reference only when the message got in), and reports whether it inserted the
// message now. ErrSeqTaken when another message holds the place: the send reads the thread's
// last message and tries the next one. The same message there already (a resumed send) is
// success, false.
func (s *Store) InsertMessage(ctx context.Context, m *Message) (bool, error) {
	m.Key = MessageKey(m.ThreadID, m.Seq)
	ref := MessageRef{Key: messageRefKey(m.ID), ThreadID: m.ThreadID, Seq: m.Seq}
	_, err := s.messages.InsertMany(ctx, []any{m, ref})
	if err == nil {
		return true, nil
	}
	if !mongox.OnlyDuplicateKeys(err) {
		return false, fmt.Errorf("store messages: %w", err)
	}
	there, err := s.messageAt(ctx, m.Key)
	switch {
	case err != nil:
		return false, err
	case there.ID != m.ID:
		return false, ErrSeqTaken
	}
	// Inserted now when only the reference was there (a message stored twice is not possible:
	// the reference is inserted after it); a resumed send may have stopped between the two.
	return false, mongox.InsertOnce(ctx, s.messages, ref)
}

func (s *Store) messageAt(ctx context.Context, key string) (*Message, error) {
	var m Message
	if err := mongox.FindOne(ctx, s.messages, mongox.ByID(key), &m, options.FindOne().SetProjection(withoutEvents)); err != nil {
		return nil, fmt.Errorf("store messages: %w", err)
	}
	return &m, nil
}

// withoutEvents is the projection of reads that have no use for the ids of a write's events.
var withoutEvents = bson.D{{Key: events.EventsField, Value: 0}}

// LastMessage returns a thread's last message; mongox.ErrNotFound for a thread without any.
func (s *Store) LastMessage(ctx context.Context, threadID string) (*Message, error) {
	ms, err := findMessages(ctx, s, mongox.Range{Scope: mongox.Scope(threadID), Desc: true, Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("store messages: %w", err)
	}
	if len(ms) == 0 {
		return nil, mongox.ErrNotFound
	}
	return &ms[0], nil
}

// Message returns a message by id (its reference, then the message); mongox.ErrNotFound if none.
func (s *Store) Message(ctx context.Context, id string) (*Message, error) {
	if !ValidID(id) {
		return nil, mongox.ErrNotFound
	}
	ref, err := byID[MessageRef](ctx, s.messages, messageRefKey(id))
	if err != nil {
		return nil, err
	}
	m, err := s.messageAt(ctx, MessageKey(ref.ThreadID, ref.Seq))
	if errors.Is(err, mongox.ErrNotFound) {
		return nil, mongox.ErrNotFound
	}
	return m, err
}

// ThreadPage reads up to limit messages of a thread after the message with key after ("" from
// the first), oldest first, in one find; more says whether messages follow the page.
func (s *Store) ThreadPage(ctx context.Context, threadID, after string, limit int) (msgs []Message, more bool, err error) {
	msgs, err = findMessages(ctx, s, mongox.Range{Scope: mongox.Scope(threadID), After: after, Limit: limit + 1})
	if err != nil {
		return nil, false, fmt.Errorf("store messages: %w", err)
	}
	if len(msgs) > limit {
		return msgs[:limit], true, nil
	}
	return msgs, false, nil
}

// MessagesAfter returns up to limit messages of a thread after its message seq, oldest first.
func (s *Store) MessagesAfter(ctx context.Context, threadID string, seq int64, limit int) ([]Message, error) {
	msgs, _, err := s.ThreadPage(ctx, threadID, MessageKey(threadID, seq), limit)
	return msgs, err
}

// findMessages reads the messages of r in one find, without the ids of their events.
func findMessages(ctx context.Context, s *Store, r mongox.Range) ([]Message, error) {
	return mongox.FindAll[Message](ctx, s.messages, r.Filter(), r.Options().SetProjection(withoutEvents))
}
