package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
)

// BoxEntry is a thread as one participant's mailbox lists it, keyed by what the mailbox is read
// in: BoxKey(object, scope, last message time, thread). Each thread stands in two scopes of
// each of its mailboxes: "all" and its status ("open" or "archived"), so that a page of either is
// one range read newest first. A send moves the thread up by inserting its new entries and
// deleting the ones it replaces, and the entry carries the counts as of that message, so a page
// needs nothing else of the thread but its reader's ReadState.
type BoxEntry struct {
	Key           string    `bson:"_id"`
	ObjectID      string    `bson:"object_id"`
	ThreadID      string    `bson:"thread_id"`
	Participants  []string  `bson:"participants"`
	Status        string    `bson:"status"`
	LastMessageAt time.Time `bson:"last_message_at"`
	// Messages is the thread's count, Inbound how many of them were sent to ObjectID.
	Messages int64 `bson:"messages"`
	Inbound  int64 `bson:"inbound"`
}

// boxAll is the scope of a mailbox that lists every thread, whatever its status.
const boxAll = "all"

// BoxScope is the scope of objectID's mailbox listing threads of status ("" for all).
func BoxScope(objectID, status string) string {
	return mongox.Scope(objectID, cmp.Or(status, boxAll))
}

// BoxKey is the _id of a thread's entry in one scope of objectID's mailbox.
func BoxKey(objectID, scope string, at time.Time, threadID string) string {
	return mongox.Key(objectID, scope, mongox.Time(at), threadID)
}

// BoxEntries are the entries of thread t in each of its mailboxes, as of its message seq (first
// of them to the first participant) sent at `at`, with status.
func BoxEntries(t *Thread, status string, at time.Time, seq, first int64) []BoxEntry {
	var out []BoxEntry
	for _, o := range t.Boxes() {
		for _, scope := range []string{boxAll, status} {
			out = append(out, BoxEntry{Key: BoxKey(o, scope, at, t.ID), ObjectID: o, ThreadID: t.ID, Participants: t.Participants,
				Status: status, LastMessageAt: at, Messages: seq, Inbound: t.Inbound(o, seq, first)})
		}
	}
	return out
}

// BoxKeys are the keys of thread t's entries while its latest message was sent at `at` and its
// status was status.
func BoxKeys(t *Thread, status string, at time.Time) []string {
	var out []string
	for _, o := range t.Boxes() {
		out = append(out, BoxKey(o, boxAll, at, t.ID), BoxKey(o, status, at, t.ID))
	}
	return out
}

// PutBoxEntries inserts entries (one command; an entry there already is kept), then deletes the
// entries of keys old that are not among them (one command, when there are any).
func (s *Store) PutBoxEntries(ctx context.Context, entries []BoxEntry, old []string) error {
	if _, err := mongox.InsertNew(ctx, s.mailboxes, entries); err != nil {
		return fmt.Errorf("store mailboxes: %w", err)
	}
	var gone []string
	for _, k := range old {
		if !slices.ContainsFunc(entries, func(e BoxEntry) bool { return e.Key == k }) {
			gone = append(gone, k)
		}
	}
	return mongox.DeleteIn(ctx, s.mailboxes, gone)
}

// maxBoxReads bounds the finds of one mailbox page: a page reads again only when it met entries
// that an entry above them replaced (see Mailbox).
const maxBoxReads = 4

// Mailbox reads a page of objectID's mailbox of status ("" for all), latest activity first,
// below the entry with key before ("" from the newest): one find of limit+1 entries. next is the
// key of the page's last entry when more follow, "" on the last page.
//
// Two sends of one instant to one thread, on FerretDB, may each delete the entry the other had
// not written yet, and leave an older entry of the thread beside its newest. A page shows a
// thread once, at its newest entry, deletes the older one, and reads on so that it still comes
// back full.
func (s *Store) Mailbox(ctx context.Context, objectID, status, before string, limit int) (entries []BoxEntry, next string, err error) {
	scope := BoxScope(objectID, status)
	if before != "" && !strings.HasPrefix(before, scope) {
		return nil, "", fmt.Errorf("store mailboxes: %q is not a key of %s", before, scope)
	}
	seen := map[string]bool{}
	var stale []string
	for reads := 0; reads < maxBoxReads && len(entries) <= limit; reads++ {
		want := limit + 1 - len(entries)
		page, err := mongox.Find[BoxEntry](ctx, s.mailboxes, mongox.Range{Scope: scope, Before: before, Desc: true, Limit: want})
		if err != nil {
			return nil, "", fmt.Errorf("store mailboxes: %w", err)
		}
		for _, e := range page {
			if seen[e.ThreadID] {
				stale = append(stale, e.Key)
				continue
			}
			seen[e.ThreadID] = true
			entries = append(entries, e)
		}
		if len(page) < want {
			break
		}
		before = page[len(page)-1].Key
	}
	if err := mongox.DeleteIn(ctx, s.mailboxes, stale); err != nil {
		return nil, "", err
	}
	if len(entries) > limit {
		entries = entries[:limit]
		next = entries[limit-1].Key
	}
	return entries, next, nil
}

// SetBoxStatus moves thread t (as it stood before, status included) to the scope of status in
// its mailboxes, and sets the status its entries show.
func (s *Store) SetBoxStatus(ctx context.Context, t *Thread, status string) error {
	if t.Status == status {
		return nil
	}
	var all []string
	for _, o := range t.Boxes() {
		all = append(all, BoxKey(o, boxAll, t.LastMessageAt, t.ID))
	}
	current, err := mongox.FindIn[BoxEntry](ctx, s.mailboxes, all)
	if err != nil {
		return fmt.Errorf("store mailboxes: %w", err)
	}
	if err := mongox.UpdateIn(ctx, s.mailboxes, all, bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: status}}}}); err != nil {
		return err
	}
	var moved []BoxEntry
	var old []string
	for _, e := range current {
		old = append(old, BoxKey(e.ObjectID, t.Status, e.LastMessageAt, t.ID))
		e.Key, e.Status = BoxKey(e.ObjectID, status, e.LastMessageAt, t.ID), status
		moved = append(moved, e)
	}
	return s.PutBoxEntries(ctx, moved, old)
}
