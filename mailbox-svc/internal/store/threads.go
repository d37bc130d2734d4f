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

// TouchThread records a message sent at `at`: the thread moves up the mailbox and reopens.
func (s *Store) TouchThread(ctx context.Context, id string, at time.Time, status string) error {
	_, err := s.threads.UpdateOne(ctx, mongox.ByID(id), bson.D{
		{Key: "$max", Value: bson.D{{Key: "last_message_at", Value: at}}},
		{Key: "$set", Value: bson.D{{Key: "status", Value: status}}},
	})
	if err != nil {
		return fmt.Errorf("store threads: %w", err)
	}
	return nil
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

// MailboxPosition is where a mailbox page starts: after the thread with this last message time
// and id.
type MailboxPosition struct {
	LastMessageAt time.Time
	ThreadID      string
}

// MailboxQuery selects an object's threads, latest activity first.
type MailboxQuery struct {
	ObjectID string
	Status   string // "" for every status
	After    *MailboxPosition
	Limit    int
}

// Mailbox lists the threads an object takes part in.
func (s *Store) Mailbox(ctx context.Context, q MailboxQuery) ([]Thread, error) {
	filter := bson.D{{Key: "participants", Value: q.ObjectID}}
	if q.Status != "" {
		filter = append(filter, bson.E{Key: "status", Value: q.Status})
	}
	if p := q.After; p != nil {
		filter = append(filter, bson.E{Key: "$or", Value: bson.A{
			bson.D{{Key: "last_message_at", Value: bson.D{{Key: "$lt", Value: p.LastMessageAt}}}},
			bson.D{{Key: "last_message_at", Value: p.LastMessageAt}, {Key: "_id", Value: bson.D{{Key: "$lt", Value: p.ThreadID}}}},
		}})
	}
	opts := options.Find().SetSort(bson.D{{Key: "last_message_at", Value: -1}, {Key: "_id", Value: -1}}).SetLimit(int64(q.Limit))
	return mongox.FindAll[Thread](ctx, s.threads, filter, opts)
}

// Counts are a thread's message counts as one participant sees them.
type Counts struct {
	Messages int
	Unread   int
}

// Counts counts the messages of threads, and those still unread by viewerID: its inbound
// messages without a read receipt. Both are counted from the documents themselves, so they are
// exact however many replicas write at once.
func (s *Store) Counts(ctx context.Context, viewerID string, threadIDs []string) (map[string]Counts, error) {
	out := make(map[string]Counts, len(threadIDs))
	if len(threadIDs) == 0 {
		return out, nil
	}
	in := bson.D{{Key: "$in", Value: threadIDs}}
	total, err := countBy(ctx, s.messages, bson.D{{Key: "thread_id", Value: in}}, "thread_id")
	if err != nil {
		return nil, err
	}
	inbound, err := countBy(ctx, s.messages, bson.D{{Key: "thread_id", Value: in}, {Key: "to_id", Value: viewerID}}, "thread_id")
	if err != nil {
		return nil, err
	}
	read, err := countBy(ctx, s.reads, bson.D{{Key: "thread_id", Value: in}, {Key: "reader_id", Value: viewerID}}, "thread_id")
	if err != nil {
		return nil, err
	}
	for _, id := range threadIDs {
		out[id] = Counts{Messages: total[id], Unread: max(inbound[id]-read[id], 0)}
	}
	return out, nil
}
