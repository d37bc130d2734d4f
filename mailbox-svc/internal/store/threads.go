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

// Thread is one relationship's conversation. Participants are object ids, the first sender
// first; hashes are looked up when a thread is shown, because a hash can change.
type Thread struct {
	ID           string    `bson:"_id"`
	Participants []string  `bson:"participants"`
	Admission    string    `bson:"participant_admission"`
	Status       string    `bson:"status"`
	CreatedAt    time.Time `bson:"created_at"`
	// LastMessageAt is the time of the latest message. Concurrent sends to one thread may
	// leave it at the time of any one of them on FerretDB (see the package comment).
	LastMessageAt time.Time `bson:"last_message_at"`
	// LastMessageID is the latest message sent (of concurrent sends, any one of them): the next
	// send links its message to it (Message.Prev), and a read logs it (LogThread). Threads stored
	// before it have none.
	LastMessageID string `bson:"last_message_id,omitempty"`
}

// Has reports whether objectID takes part in the thread.
func (t *Thread) Has(objectID string) bool { return slices.Contains(t.Participants, objectID) }

// Between reports whether the thread is the one between objects a and b.
func (t *Thread) Between(a, b string) bool { return Between(t.Participants, a, b) }

// Between reports whether participants are objects a and b.
func Between(participants []string, a, b string) bool {
	return len(participants) == 2 && slices.Contains(participants, a) && slices.Contains(participants, b)
}

// InsertThread stores a new thread; false if one with its id exists.
func (s *Store) InsertThread(ctx context.Context, t *Thread) (bool, error) {
	created, err := insertBatched(ctx, s.newThreads, t)
	if created {
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
	var t Thread
	err := mongox.FindOne(ctx, s.threads, mongox.ByID(id), &t, options.FindOne().SetProjection(bson.D{{Key: "participants", Value: 1}}))
	if err != nil {
		return nil, err
	}
	s.participants.Add(id, t.Participants)
	return t.Participants, nil
}

// Thread returns a thread by id; mongox.ErrNotFound if there is none.
func (s *Store) Thread(ctx context.Context, id string) (*Thread, error) {
	var t Thread
	if err := mongox.FindOne(ctx, s.threads, mongox.ByID(id), &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// TouchThread records message messageID sent at `at`: the thread reopens, takes the message as
// its latest, and answers the message that was its latest until now (to link the new one to), in
// the same command.
func (s *Store) TouchThread(ctx context.Context, id, messageID string, at time.Time, status string) (prev string, err error) {
	var before Thread
	err = s.threads.FindOneAndUpdate(ctx, mongox.ByID(id), bson.D{
		{Key: "$max", Value: bson.D{{Key: "last_message_at", Value: at}}},
		{Key: "$set", Value: bson.D{{Key: "status", Value: status}, {Key: "last_message_id", Value: messageID}}},
	}, options.FindOneAndUpdate().SetReturnDocument(options.Before)).Decode(&before)
	if mongox.IsNotFound(err) {
		return "", mongox.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("store threads: %w", err)
	}
	return before.LastMessageID, nil
}

// SetThreadStatus sets a thread's status and returns the thread as it now is.
func (s *Store) SetThreadStatus(ctx context.Context, id, status string) (*Thread, error) {
	res, err := s.threads.UpdateOne(ctx, mongox.ByID(id), bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: status}}}})
	if err != nil {
		return nil, fmt.Errorf("store threads: %w", err)
	}
	if res.MatchedCount == 0 {
		return nil, mongox.ErrNotFound
	}
	return s.Thread(ctx, id)
}
