package store

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// Message is one message of a thread. It is written once, with the ids of its events.
type Message struct {
	ID        string    `bson:"_id"`
	ThreadID  string    `bson:"thread_id"`
	FromID    string    `bson:"from_id"`
	ToID      string    `bson:"to_id"`
	Kind      string    `bson:"kind"`
	Body      string    `bson:"body"`
	CreatedAt time.Time `bson:"created_at"`
	// Signature is the sender's verified signature of the message, nil for an unverified send.
	Signature *Signature `bson:"signature,omitempty"`
	// Prev is the message that was the thread's latest when this one was sent ("" for the first,
	// and for messages stored before it was kept): LogThread follows it back.
	Prev string `bson:"prev,omitempty"`
	// Seq is the message's position in its thread's list once it is logged there (0 until then).
	Seq    int64    `bson:"seq,omitempty"`
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
}

// InsertMessage stores a message; false if one with its id exists (a retried send).
func (s *Store) InsertMessage(ctx context.Context, m *Message) (bool, error) {
	return insertBatched(ctx, s.newMessages, m)
}

// Message returns a message by id; mongox.ErrNotFound if none.
func (s *Store) Message(ctx context.Context, id string) (*Message, error) {
	var m Message
	if err := mongox.FindOne(ctx, s.messages, mongox.ByID(id), &m, options.FindOne().SetProjection(withoutEvents)); err != nil {
		return nil, err
	}
	return &m, nil
}
