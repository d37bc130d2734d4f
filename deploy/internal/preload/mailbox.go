package preload

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/mongox"
)

// Participant is an object a preloaded thread names, with its current hash.
type Participant struct{ ObjectID, Hash string }

// Message is a message of a preloaded thread.
type Message struct {
	ID, FromID, ToID, Body string
	At                     time.Time
}

// Thread is a thread to preload: its two participants (the first sender first) and its
// messages, oldest first.
type Thread struct {
	ID           string
	Participants [2]Participant
	Messages     []Message
}

// Threads stores threads (none stored yet) in mailbox-svc's database db with their messages,
// unread, as sends leave them (mailbox-svc's store, layout 2): each message under
// <thread>|<seq> with its id's reference, the thread's entries in both mailboxes (all and open),
// the thread itself, and the participants' hash records it lacks, a few commands for all the threads.
func Threads(ctx context.Context, db *mongo.Database, threads []Thread) error {
	var msgs, boxes, docs []any
	named := map[string]string{}
	for _, t := range threads {
		a, b := t.Participants[0], t.Participants[1]
		named[a.ObjectID], named[b.ObjectID] = a.Hash, b.Hash
		var seq, first int64
		prev := ""
		for _, m := range t.Messages {
			seq++
			if m.ToID == a.ObjectID {
				first++
			}
			msg := bson.D{{Key: "_id", Value: mongox.Key(t.ID, mongox.Seq(seq))}, {Key: "id", Value: m.ID}, {Key: "thread_id", Value: t.ID},
				{Key: "seq", Value: seq}, {Key: "from_id", Value: m.FromID}, {Key: "to_id", Value: m.ToID}, {Key: "kind", Value: "note"},
				{Key: "body", Value: m.Body}, {Key: "created_at", Value: m.At}}
			if prev != "" {
				msg = append(msg, bson.E{Key: "prev", Value: prev})
			}
			msgs = append(msgs, append(msg, bson.E{Key: "first", Value: first}),
				bson.D{{Key: "_id", Value: mongox.Key("id", m.ID)}, {Key: "thread_id", Value: t.ID}, {Key: "seq", Value: seq}})
			prev = m.ID
		}
		participants := bson.A{a.ObjectID, b.ObjectID}
		thread := bson.D{{Key: "_id", Value: t.ID}, {Key: "participants", Value: participants}, {Key: "participant_admission", Value: "open"},
			{Key: "status", Value: "open"}, {Key: "layout", Value: 2}}
		if len(t.Messages) == 0 {
			docs = append(docs, append(thread, bson.E{Key: "created_at", Value: time.Time{}}, bson.E{Key: "last_message_at", Value: time.Time{}},
				bson.E{Key: "last_seq", Value: int64(0)}, bson.E{Key: "last_first", Value: int64(0)}))
			continue
		}
		last := t.Messages[len(t.Messages)-1]
		docs = append(docs, append(thread, bson.E{Key: "created_at", Value: t.Messages[0].At}, bson.E{Key: "last_message_at", Value: last.At},
			bson.E{Key: "last_message_id", Value: last.ID}, bson.E{Key: "last_seq", Value: seq}, bson.E{Key: "last_first", Value: first}))
		// Each participant's mailbox lists the thread under its last message's time, in every thread
		// and in the open ones, with how many of its messages were sent to that participant.
		for _, box := range []struct {
			id      string
			inbound int64
		}{{a.ObjectID, first}, {b.ObjectID, seq - first}} {
			for _, scope := range []string{"all", "open"} {
				boxes = append(boxes, bson.D{{Key: "_id", Value: mongox.Key(box.id, scope, mongox.Time(last.At), t.ID)}, {Key: "object_id", Value: box.id},
					{Key: "thread_id", Value: t.ID}, {Key: "participants", Value: participants}, {Key: "status", Value: "open"},
					{Key: "last_message_at", Value: last.At}, {Key: "messages", Value: seq}, {Key: "inbound", Value: box.inbound}})
			}
		}
	}
	hashes, err := missingHashes(ctx, db, named)
	if err != nil {
		return err
	}
	// The thread last, as an import writes it: a thread stored is a thread whole.
	if err := insertAll(ctx, db, map[string][]any{"object_hashes": hashes, "thread_messages": msgs, "mailboxes": boxes}); err != nil {
		return err
	}
	return insertAll(ctx, db, map[string][]any{"threads": docs})
}

// missingHashes are the hash records of named (object id to hash) that mailbox-svc's store does
// not hold yet. Many threads name the same objects: inserting only the missing records keeps each
// insert free of duplicates, which the embedded store would otherwise retry one document at a time.
func missingHashes(ctx context.Context, db *mongo.Database, named map[string]string) ([]any, error) {
	ids := slices.Sorted(maps.Keys(named))
	var out []any
	for start := 0; start < len(ids); start += insertBatch {
		part := ids[start:min(start+insertBatch, len(ids))]
		held, err := mongox.FindAll[struct {
			ID string `bson:"_id"`
		}](ctx, db.Collection("object_hashes"), bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: part}}}})
		if err != nil {
			return nil, fmt.Errorf("preload object_hashes: %w", err)
		}
		have := map[string]bool{}
		for _, h := range held {
			have[h.ID] = true
		}
		for _, id := range part {
			if !have[id] {
				out = append(out, bson.D{{Key: "_id", Value: id}, {Key: "hash", Value: named[id]}})
			}
		}
	}
	return out, nil
}
