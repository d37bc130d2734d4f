package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"golang.org/x/sync/errgroup"

	"github.com/svcdev/svc/pkg/mongox"
)

// The lists (mongox.Log) that thread, mailbox and blocked-list reads page through. FerretDB pushes
// down only _id equality, so each list is a run of documents read by _id, and every count a page
// shows is a list's length: a page costs its size, whatever the store holds.
//
//   - ThreadList: a thread's messages (MessageEntry), in the order they were logged, which follows
//     the order of sends (see LogThread).
//   - InboundList: the messages of a thread sent to its first participant (Mark). The second
//     participant's inbound count is the thread's length less this one's.
//   - ReadList: the read receipts of one participant in one thread (Mark).
//   - BoxList: an object's mailbox, one entry (BoxEntry) each time one of its threads moved to the
//     front; BoxThread says which entry of a thread is its current one.
//   - BlockList: the blocks an object made (BlockEntry), kept while the block stands.

// ThreadList is the list of a thread's messages.
func ThreadList(threadID string) string { return "m:" + threadID }

// InboundList is the list of a thread's messages sent to its first participant.
func InboundList(threadID string) string { return "i:" + threadID }

// ReadList is the list of the read receipts of readerID in a thread.
func ReadList(threadID, readerID string) string { return "r:" + threadID + ":" + readerID }

// BoxList is an object's mailbox.
func BoxList(objectID string) string { return "b:" + objectID }

// BlockList is the list of the blocks an object made.
func BlockList(recipientID string) string { return "k:" + recipientID }

// Mark is the value of an entry that only counts.
type Mark struct{}

// MessageEntry is a message as its thread's list keeps it: all a thread page shows of it but its
// read time.
type MessageEntry struct {
	ID        string     `bson:"id"`
	FromID    string     `bson:"from_id"`
	ToID      string     `bson:"to_id"`
	Kind      string     `bson:"kind"`
	Body      string     `bson:"body"`
	CreatedAt time.Time  `bson:"created_at"`
	Signature *Signature `bson:"signature,omitempty"`
}

// Message returns the entry as a message of threadID.
func (e MessageEntry) Message(threadID string) Message {
	return Message{ID: e.ID, ThreadID: threadID, FromID: e.FromID, ToID: e.ToID, Kind: e.Kind, Body: e.Body,
		CreatedAt: e.CreatedAt, Signature: e.Signature}
}

// BoxEntry is one move of a thread to the front of a mailbox.
type BoxEntry struct {
	ThreadID string `bson:"thread_id"`
}

// BoxThread is where a thread stands in one participant's mailbox, and its counts as that
// mailbox shows them. It is written by the mailbox projection (Pos, Messages, Inbound) and by
// that participant's thread reads (Read), each with $max of a list's length, so that any later
// write of a field sets it right again (an update on FerretDB rewrites the whole document, so
// concurrent writers may each undo the other's fields for a moment).
type BoxThread struct {
	ID       string `bson:"_id"`
	ObjectID string `bson:"object_id"`
	ThreadID string `bson:"thread_id"`
	// Pos is the position of the thread's current entry in the mailbox's list: an entry at any
	// other position is a past move of the thread and is skipped.
	Pos      int64 `bson:"pos"`
	Messages int64 `bson:"messages"`
	Inbound  int64 `bson:"inbound"`
	Read     int64 `bson:"read"`
}

// BoxThreadID is the id of the BoxThread of threadID in objectID's mailbox.
func BoxThreadID(objectID, threadID string) string { return objectID + "|" + threadID }

// maxCatchUp bounds how many unlogged messages one LogThread walks back through.
const maxCatchUp = 64

// pointReaders bounds the point reads one call sends at once.
const pointReaders = 8

// LogThread puts the messages of a thread up to and including messageID that are not in the
// thread's list yet into it, oldest first. Each message names the message that was the thread's
// latest when it was sent (Message.Prev), so the walk back from messageID finds the unlogged ones
// in send order; a message in the list carries its position (Message.Seq), which ends the walk.
// The projection calls it for every message.created, and a thread read for the thread's latest
// message, so a read right after a send shows it. Both may run at once: each message is appended
// once (keyed by its id), and the inbound list before the thread's list, so that a message in the
// thread's list is counted everywhere. It reports the messages it logged now.
func (s *Store) LogThread(ctx context.Context, threadID, messageID string) ([]Message, error) {
	var chain []Message
	for id := messageID; id != "" && len(chain) < maxCatchUp; {
		m, err := s.Message(ctx, id)
		if errors.Is(err, mongox.ErrNotFound) {
			break // not written yet (its send is under way) or never (its send failed)
		}
		if err != nil {
			return nil, err
		}
		if m.ThreadID != threadID || m.Seq > 0 {
			break
		}
		chain = append(chain, *m)
		id = m.Prev
	}
	if len(chain) == 0 {
		return nil, nil
	}
	participants, err := s.Participants(ctx, threadID)
	if err != nil {
		return nil, err
	}
	out := make([]Message, 0, len(chain))
	for i := len(chain) - 1; i >= 0; i-- {
		m := chain[i]
		if m.ToID == participants[0] && m.FromID != m.ToID {
			if _, _, err := mongox.AppendOnce(ctx, s.lists, InboundList(threadID), m.ID, Mark{}); err != nil {
				return nil, fmt.Errorf("store lists: inbound of %s: %w", threadID, err)
			}
		}
		entry := MessageEntry{ID: m.ID, FromID: m.FromID, ToID: m.ToID, Kind: m.Kind, Body: m.Body, CreatedAt: m.CreatedAt, Signature: m.Signature}
		seq, _, err := mongox.AppendOnce(ctx, s.lists, ThreadList(threadID), m.ID, entry)
		if err != nil {
			return nil, fmt.Errorf("store lists: messages of %s: %w", threadID, err)
		}
		if _, err := s.messages.UpdateOne(ctx, mongox.ByID(m.ID), bson.D{{Key: "$set", Value: bson.D{{Key: "seq", Value: seq}}}}); err != nil {
			return nil, fmt.Errorf("store messages: %w", err)
		}
		m.Seq = seq
		out = append(out, m)
	}
	return out, nil
}

// ThreadCounts are a thread's counts as one participant sees them.
type ThreadCounts struct {
	Messages, Inbound, Read int64
}

// Unread is how many of the inbound messages have no read receipt.
func (c ThreadCounts) Unread() int { return int(max(c.Inbound-c.Read, 0)) }

// ThreadCounts reads the lengths of a thread's lists for one of its participants: six point reads.
func (s *Store) ThreadCounts(ctx context.Context, t *Thread, viewerID string) (ThreadCounts, error) {
	var c ThreadCounts
	var first int64
	g, gctx := errgroup.WithContext(ctx)
	for _, read := range []struct {
		list string
		n    *int64
	}{{ThreadList(t.ID), &c.Messages}, {InboundList(t.ID), &first}, {ReadList(t.ID, viewerID), &c.Read}} {
		g.Go(func() (err error) {
			*read.n, err = s.lists.Len(gctx, read.list)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return c, fmt.Errorf("store lists: counts of %s: %w", t.ID, err)
	}
	c.Inbound = inbound(t.Participants, viewerID, c.Messages, first)
	return c, nil
}

// inbound is viewerID's inbound count in a thread of messages messages, first of them sent to its
// first participant: a thread of an object with itself (a notice) is all inbound.
func inbound(participants []string, viewerID string, messages, first int64) int64 {
	switch {
	case len(participants) < 2 || participants[0] == participants[1]:
		return messages
	case viewerID == participants[0]:
		return first
	default:
		return messages - first
	}
}

// ThreadPage reads up to limit messages of a thread, oldest first, from position from (1 for the
// first page); next is the position of the following page, 0 on the last. total is the thread's
// length.
func (s *Store) ThreadPage(ctx context.Context, threadID string, from int64, limit int) (msgs []Message, next, total int64, err error) {
	list := ThreadList(threadID)
	if total, err = s.lists.Len(ctx, list); err != nil {
		return nil, 0, 0, fmt.Errorf("store lists: %w", err)
	}
	from = max(from, 1)
	last := min(from+int64(limit)-1, total)
	if last < from {
		return []Message{}, 0, total, nil
	}
	msgs = make([]Message, last-from+1)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(pointReaders)
	for i := range msgs {
		g.Go(func() error {
			e, err := mongox.Get[MessageEntry](gctx, s.lists, list, from+int64(i))
			if err != nil {
				return fmt.Errorf("store lists: %s entry %d: %w", list, from+int64(i), err)
			}
			msgs[i] = e.Value.Message(threadID)
			msgs[i].Seq = e.Seq
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, 0, err
	}
	if last < total {
		next = last + 1
	}
	return msgs, next, total, nil
}

// MessagesAfter returns up to limit messages of a thread logged after the message at position
// seq, oldest first.
func (s *Store) MessagesAfter(ctx context.Context, threadID string, seq int64, limit int) ([]Message, error) {
	msgs, _, _, err := s.ThreadPage(ctx, threadID, seq+1, limit)
	return msgs, err
}

// ProjectMessage records a logged message in the mailboxes of its thread's participants: a thread
// that is not at the front of a mailbox gets a new entry there, and its BoxThread the counts.
func (s *Store) ProjectMessage(ctx context.Context, threadID string) error {
	t, err := s.Thread(ctx, threadID)
	if err != nil {
		return err
	}
	var messages, first int64
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { messages, err = s.lists.Len(gctx, ThreadList(threadID)); return err })
	g.Go(func() (err error) { first, err = s.lists.Len(gctx, InboundList(threadID)); return err })
	if err := g.Wait(); err != nil {
		return fmt.Errorf("store lists: counts of %s: %w", threadID, err)
	}
	for i, objectID := range t.Participants {
		if i > 0 && objectID == t.Participants[0] {
			break // a thread of an object with itself is one mailbox's
		}
		if err := s.toFront(ctx, objectID, threadID, messages, inbound(t.Participants, objectID, messages, first)); err != nil {
			return err
		}
	}
	return nil
}

// toFront moves a thread to the front of objectID's mailbox, unless it is there already, and
// records its counts: a few point reads, and an append only when the thread moves.
func (s *Store) toFront(ctx context.Context, objectID, threadID string, messages, inboundCount int64) error {
	box := BoxList(objectID)
	var bt BoxThread
	var length, read int64
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { read, err = s.lists.Len(gctx, ReadList(threadID, objectID)); return err })
	g.Go(func() error {
		err := mongox.FindOne(gctx, s.boxThreads, mongox.ByID(BoxThreadID(objectID, threadID)), &bt)
		if errors.Is(err, mongox.ErrNotFound) {
			return nil
		}
		return err
	})
	g.Go(func() (err error) { length, err = s.lists.Len(gctx, box); return err })
	if err := g.Wait(); err != nil {
		return fmt.Errorf("store mailbox %s: %w", objectID, err)
	}
	// The read count too, which the reader's thread reads set: an update of theirs that met this
	// one (see BoxThread) is set right here.
	set := bson.D{{Key: "messages", Value: messages}, {Key: "inbound", Value: inboundCount}, {Key: "read", Value: read}}
	if bt.Pos == 0 || bt.Pos != length {
		pos, err := mongox.Append(ctx, s.lists, box, BoxEntry{ThreadID: threadID})
		if err != nil {
			return fmt.Errorf("store mailbox %s: %w", objectID, err)
		}
		set = append(set, bson.E{Key: "pos", Value: pos})
	}
	return s.raiseBoxThread(ctx, objectID, threadID, set)
}

// raiseBoxThread raises fields of a BoxThread to at least the values in set ($max), creating it
// if need be, and reads it back until they hold: on FerretDB a concurrent update of the document
// (another participant's message, a thread read) may rewrite it from what it read before this
// write, undoing it, and nothing later would set it right.
func (s *Store) raiseBoxThread(ctx context.Context, objectID, threadID string, set bson.D) error {
	id := BoxThreadID(objectID, threadID)
	for range 5 {
		err := mongox.Upsert(ctx, s.boxThreads, id, bson.D{
			{Key: "$max", Value: set},
			{Key: "$setOnInsert", Value: bson.D{{Key: "object_id", Value: objectID}, {Key: "thread_id", Value: threadID}}},
		})
		if err != nil {
			return fmt.Errorf("store box threads: %w", err)
		}
		var now BoxThread
		if err := mongox.FindOne(ctx, s.boxThreads, mongox.ByID(id), &now); err != nil {
			return fmt.Errorf("store box threads: %w", err)
		}
		got := map[string]int64{"pos": now.Pos, "messages": now.Messages, "inbound": now.Inbound, "read": now.Read}
		held := true
		for _, f := range set {
			if got[f.Key] < f.Value.(int64) {
				held = false
			}
		}
		if held {
			return nil
		}
	}
	return fmt.Errorf("store box threads: %s keeps changing", id)
}

// MailboxRow is a thread of a mailbox page: the thread and its counts as the mailbox shows them.
type MailboxRow struct {
	Thread Thread
	Counts ThreadCounts
}

// mailboxBudget is how many entries of a mailbox's list one page reads at most, per thread
// shown: past moves of a thread, and threads of another status, are skipped.
const mailboxBudget = 4

// Mailbox reads a page of objectID's mailbox, the threads that moved to its front last first,
// from position before (0: the newest); status "" keeps every status. next is where the next
// page starts, 0 on the last. A page reads at most mailboxBudget entries per thread it may show,
// so one that meets many past moves or threads of another status comes back short, with a next.
func (s *Store) Mailbox(ctx context.Context, objectID, status string, before int64, limit int) (rows []MailboxRow, next int64, err error) {
	kept := map[int64]MailboxRow{}
	entries, next, err := mongox.PageWhere(ctx, s.lists, BoxList(objectID), before, limit, mailboxBudget*limit,
		func(ctx context.Context, e mongox.Entry[BoxEntry]) (bool, error) {
			var bt BoxThread
			err := mongox.FindOne(ctx, s.boxThreads, mongox.ByID(BoxThreadID(objectID, e.Value.ThreadID)), &bt)
			if errors.Is(err, mongox.ErrNotFound) || (err == nil && bt.Pos != e.Seq) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			row := MailboxRow{Counts: ThreadCounts{Messages: bt.Messages, Inbound: bt.Inbound, Read: bt.Read}}
			if status != "" {
				t, err := s.Thread(ctx, e.Value.ThreadID)
				if err != nil {
					return false, err
				}
				if t.Status != status {
					return false, nil
				}
				row.Thread = *t
			}
			kept[e.Seq] = row
			return true, nil
		})
	if err != nil {
		return nil, 0, fmt.Errorf("store mailbox %s: %w", objectID, err)
	}
	rows = make([]MailboxRow, len(entries))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(pointReaders)
	for i, e := range entries {
		rows[i] = kept[e.Seq]
		if rows[i].Thread.ID != "" {
			continue
		}
		g.Go(func() error {
			t, err := s.Thread(gctx, e.Value.ThreadID)
			if err != nil {
				return err
			}
			rows[i].Thread = *t
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, fmt.Errorf("store mailbox %s: %w", objectID, err)
	}
	return rows, next, nil
}

// LogThreadUpTo is LogThread for callers that need only its writes.
func (s *Store) LogThreadUpTo(ctx context.Context, threadID, messageID string) error {
	_, err := s.LogThread(ctx, threadID, messageID)
	return err
}
