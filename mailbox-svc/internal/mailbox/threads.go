package mailbox

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/mongox"
)

// ThreadStore is what the thread and mailbox reads need.
type ThreadStore interface {
	Thread(ctx context.Context, id string) (*store.Thread, error)
	Mailbox(ctx context.Context, q store.MailboxQuery) ([]store.Thread, error)
	Counts(ctx context.Context, viewerID string, threadIDs []string) (map[string]store.Counts, error)
	Messages(ctx context.Context, threadID, after string, limit int) ([]store.Message, error)
	MarkRead(ctx context.Context, threadID, readerID string, messageIDs []string, at time.Time) error
	ReadTimes(ctx context.Context, messageIDs []string) (map[string]time.Time, error)
	SetThreadStatus(ctx context.Context, id, status string) (*store.Thread, error)
}

// Threads shows threads and mailboxes to their participants, and opens or archives threads.
type Threads struct {
	Store ThreadStore
	Names *Names
}

// Summary is a thread as one participant sees it in a list.
type Summary struct {
	ID string
	// Participants are the participants' current hashes.
	Participants  []string
	Status        string
	LastMessageAt time.Time
	MessageCount  int
	UnreadCount   int
}

// ThreadView is a thread read by a participant: its summary and a page of messages.
type ThreadView struct {
	Summary
	Admission string
	Messages  []MessageView
	// Next is the cursor of the next page, nil on the last.
	Next *string
}

// MessageView is a message as a thread read shows it.
type MessageView struct {
	ID, FromHash, ToHash, Kind, Body string
	CreatedAt                        time.Time
	ReadAt                           *time.Time
	// Signature is the sender's verified signature, nil for an unverified sender.
	Signature *store.Signature
}

// MailboxQuery selects a page of an object's mailbox.
type MailboxQuery struct {
	Status string // "" for every status
	Limit  int    // at least 1
	// Cursor is where the page starts ("" for the first); see ValidMailboxCursor.
	Cursor string
}

// Mailbox lists the threads viewerID takes part in, latest activity first, and the cursor of the
// next page (nil on the last).
func (t *Threads) Mailbox(ctx context.Context, viewerID string, q MailboxQuery) ([]Summary, *string, error) {
	if q.Status != "" && !ValidStatus(q.Status) {
		return nil, nil, httpx.BadRequest(httpx.CodeInvalidRequest, "status must be open or archived")
	}
	threads, err := t.Store.Mailbox(ctx, store.MailboxQuery{
		ObjectID: viewerID, Status: q.Status, After: parseMailboxCursor(q.Cursor),
		Limit: q.Limit + 1, // one more tells whether there is a next page
	})
	if err != nil {
		return nil, nil, err
	}
	threads, next := httpx.Page(threads, q.Limit, mailboxCursor)
	summaries, _, err := t.summaries(ctx, viewerID, threads)
	return summaries, next, err
}

// Read shows a page of a thread to one of its participants, oldest message first, and marks the
// participant's inbound messages of that page read. Its cost is bounded by the page size.
func (t *Threads) Read(ctx context.Context, viewerID, threadID, after string, limit int) (*ThreadView, error) {
	th, err := t.participantThread(ctx, threadID, viewerID)
	if err != nil {
		return nil, err
	}
	msgs, err := t.Store.Messages(ctx, th.ID, after, limit+1)
	if err != nil {
		return nil, err
	}
	view := &ThreadView{Admission: th.Admission, Messages: []MessageView{}}
	msgs, view.Next = httpx.Page(msgs, limit, func(m store.Message) string { return m.ID })
	readAt, err := t.markRead(ctx, th.ID, viewerID, msgs)
	if err != nil {
		return nil, err
	}
	summaries, hashes, err := t.summaries(ctx, viewerID, []store.Thread{*th}) // counted after marking
	if err != nil {
		return nil, err
	}
	view.Summary = summaries[0]
	for _, m := range msgs {
		mv := MessageView{ID: m.ID, FromHash: hashes[m.FromID], ToHash: hashes[m.ToID], Kind: m.Kind, Body: m.Body, CreatedAt: m.CreatedAt,
			Signature: m.Signature}
		if at, ok := readAt[m.ID]; ok {
			mv.ReadAt = &at
		}
		view.Messages = append(view.Messages, mv)
	}
	return view, nil
}

// markRead marks the messages of a page sent to readerID read, and returns the read time of every
// read message of the page: the first reader's time, also when readers race.
func (t *Threads) markRead(ctx context.Context, threadID, readerID string, page []store.Message) (map[string]time.Time, error) {
	ids := make([]string, len(page))
	for i, m := range page {
		ids[i] = m.ID
	}
	readAt, err := t.Store.ReadTimes(ctx, ids)
	if err != nil {
		return nil, err
	}
	var unread []string
	for _, m := range page {
		if _, ok := readAt[m.ID]; !ok && m.ToID == readerID {
			unread = append(unread, m.ID)
		}
	}
	if len(unread) == 0 {
		return readAt, nil
	}
	if err := t.Store.MarkRead(ctx, threadID, readerID, unread, clock.Now()); err != nil {
		return nil, err
	}
	return t.Store.ReadTimes(ctx, ids)
}

// SetStatus opens or archives a thread; either participant may.
func (t *Threads) SetStatus(ctx context.Context, viewerID, threadID, status string) (*Summary, error) {
	if !ValidStatus(status) {
		return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "status must be open or archived")
	}
	th, err := t.participantThread(ctx, threadID, viewerID)
	if err != nil {
		return nil, err
	}
	if th, err = t.Store.SetThreadStatus(ctx, th.ID, status); err != nil {
		return nil, notFound(err, "thread")
	}
	summaries, _, err := t.summaries(ctx, viewerID, []store.Thread{*th})
	if err != nil {
		return nil, err
	}
	return &summaries[0], nil
}

// Participants tells other services who takes part in a thread.
func (t *Threads) Participants(ctx context.Context, threadID string) (*contract.Thread, error) {
	th, err := t.Store.Thread(ctx, threadID)
	if err != nil {
		return nil, notFound(err, "thread")
	}
	hashes, err := t.Names.Hashes(ctx, th.Participants)
	if err != nil {
		return nil, err
	}
	out := &contract.Thread{ThreadID: th.ID, Status: th.Status, ParticipantAdmission: th.Admission, CreatedAt: clock.Format(th.CreatedAt)}
	for _, id := range th.Participants {
		out.Participants = append(out.Participants, contract.Participant{ObjectID: id, Hash: hashes[id]})
	}
	return out, nil
}

// participantThread returns a thread objectID takes part in. Any other thread, existing or not,
// is not found: its existence is never revealed.
func (t *Threads) participantThread(ctx context.Context, id, objectID string) (*store.Thread, error) {
	if len(id) > MaxThreadID {
		return nil, httpx.NotFound("thread")
	}
	th, err := t.Store.Thread(ctx, id)
	if err != nil {
		return nil, notFound(err, "thread")
	}
	if !th.Has(objectID) {
		return nil, httpx.NotFound("thread")
	}
	return th, nil
}

// summaries renders threads as viewerID sees them, and returns the hashes of their participants.
func (t *Threads) summaries(ctx context.Context, viewerID string, threads []store.Thread) ([]Summary, map[string]string, error) {
	ids := make([]string, len(threads))
	var objects []string
	for i, th := range threads {
		ids[i] = th.ID
		objects = append(objects, th.Participants...)
	}
	counts, err := t.Store.Counts(ctx, viewerID, ids)
	if err != nil {
		return nil, nil, err
	}
	hashes, err := t.Names.Hashes(ctx, unique(objects))
	if err != nil {
		return nil, nil, err
	}
	out := make([]Summary, len(threads))
	for i, th := range threads {
		participants := make([]string, len(th.Participants))
		for j, id := range th.Participants {
			participants[j] = hashes[id]
		}
		n := counts[th.ID]
		out[i] = Summary{
			ID: th.ID, Participants: participants, Status: th.Status, LastMessageAt: th.LastMessageAt,
			MessageCount: n.Messages, UnreadCount: n.Unread,
		}
	}
	return out, hashes, nil
}

// notFound maps the store's not-found to the public 404 naming what.
func notFound(err error, what string) error {
	if errors.Is(err, mongox.ErrNotFound) {
		return httpx.NotFound(what)
	}
	return err
}

func unique(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// mailboxCursor is the cursor of a mailbox page: the last message time and the id of the last
// thread shown, as "<unix ms>|<thread id>".
func mailboxCursor(t store.Thread) string {
	return strconv.FormatInt(t.LastMessageAt.UnixMilli(), 10) + "|" + t.ID
}

// ValidMailboxCursor reports whether s is a mailbox page cursor.
func ValidMailboxCursor(s string) bool { return parseMailboxCursor(s) != nil }

func parseMailboxCursor(s string) *store.MailboxPosition {
	ms, id, ok := strings.Cut(s, "|")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || !strings.HasPrefix(id, "thr_") {
		return nil
	}
	return &store.MailboxPosition{LastMessageAt: time.UnixMilli(n).UTC(), ThreadID: id}
}
