package mailbox

import (
	"context"
	"errors"
	"maps"
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
	LogThread(ctx context.Context, threadID, messageID string) ([]store.Message, error)
	ThreadPage(ctx context.Context, threadID string, from int64, limit int) (msgs []store.Message, next, total int64, err error)
	ThreadCounts(ctx context.Context, t *store.Thread, viewerID string) (store.ThreadCounts, error)
	Mailbox(ctx context.Context, objectID, status string, before int64, limit int) ([]store.MailboxRow, int64, error)
	MarkRead(ctx context.Context, threadID, readerID string, messageIDs []string, at time.Time) error
	SyncRead(ctx context.Context, threadID, readerID string, read int64) error
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
	// Before is the position the page starts below (0: the newest), from a MailboxScope cursor.
	Before int64
}

// MailboxScope is what a mailbox page cursor is bound to (httpx.SeqCursor): the object's list.
func MailboxScope(objectID string) string { return "mailbox:" + objectID }

// ThreadScope is what a thread page cursor is bound to: the thread's list.
func ThreadScope(threadID string) string { return "thread:" + threadID }

// Mailbox lists the threads viewerID takes part in, latest activity first, and the cursor of the
// next page (nil on the last). The mailbox is a projection of message.created: a send moves its
// thread to the front, and updates its counts there, a moment after its 201. A page that meets
// many past moves of threads, or threads of another status, may come back short with a cursor.
func (t *Threads) Mailbox(ctx context.Context, viewerID string, q MailboxQuery) ([]Summary, *string, error) {
	if q.Status != "" && !ValidStatus(q.Status) {
		return nil, nil, httpx.BadRequest(httpx.CodeInvalidRequest, "status must be open or archived")
	}
	rows, next, err := t.Store.Mailbox(ctx, viewerID, q.Status, q.Before, q.Limit)
	if err != nil {
		return nil, nil, err
	}
	threads := make([]store.Thread, len(rows))
	counts := make([]store.ThreadCounts, len(rows))
	for i, r := range rows {
		threads[i], counts[i] = r.Thread, r.Counts
	}
	summaries, _, err := t.summaries(ctx, threads, counts)
	return summaries, seqCursor(MailboxScope(viewerID), next), err
}

// seqCursor is the cursor of position next of a list (nil for 0: no next page).
func seqCursor(scope string, next int64) *string {
	if next == 0 {
		return nil
	}
	c := httpx.SeqCursor(scope, next)
	return &c
}

// Read shows a page of a thread to one of its participants, oldest message first, from position
// from (1, or 0, for the first page), and marks the participant's inbound messages of that page
// read. The thread's latest message is logged first if the projection has not yet, so a read
// right after a send shows it. Its cost is bounded by the page size.
func (t *Threads) Read(ctx context.Context, viewerID, threadID string, from int64, limit int) (*ThreadView, error) {
	th, err := t.participantThread(ctx, threadID, viewerID)
	if err != nil {
		return nil, err
	}
	if err := t.logLatest(ctx, th); err != nil {
		return nil, err
	}
	msgs, next, _, err := t.Store.ThreadPage(ctx, th.ID, from, limit)
	if err != nil {
		return nil, err
	}
	view := &ThreadView{Admission: th.Admission, Messages: []MessageView{}, Next: seqCursor(ThreadScope(th.ID), next)}
	readAt, marked, err := t.markRead(ctx, th.ID, viewerID, msgs)
	if err != nil {
		return nil, err
	}
	counts, err := t.Store.ThreadCounts(ctx, th, viewerID) // counted after marking
	if err != nil {
		return nil, err
	}
	if marked {
		if err := t.Store.SyncRead(ctx, th.ID, viewerID, counts.Read); err != nil {
			return nil, err
		}
	}
	summaries, hashes, err := t.summaries(ctx, []store.Thread{*th}, []store.ThreadCounts{counts})
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

// logLatest logs the thread's latest message, and those before it, if the projection has not
// yet: one point read when it has.
func (t *Threads) logLatest(ctx context.Context, th *store.Thread) error {
	if th.LastMessageID == "" {
		return nil
	}
	_, err := t.Store.LogThread(ctx, th.ID, th.LastMessageID)
	return err
}

// markRead marks the messages of a page sent to readerID read, and returns the read time of every
// read message of the page (the first reader's time, also when readers race) and whether it
// marked any.
func (t *Threads) markRead(ctx context.Context, threadID, readerID string, page []store.Message) (map[string]time.Time, bool, error) {
	ids := make([]string, len(page))
	for i, m := range page {
		ids[i] = m.ID
	}
	readAt, err := t.Store.ReadTimes(ctx, ids)
	if err != nil {
		return nil, false, err
	}
	var unread []string
	for _, m := range page {
		if _, ok := readAt[m.ID]; !ok && m.ToID == readerID {
			unread = append(unread, m.ID)
		}
	}
	if len(unread) == 0 {
		return readAt, false, nil
	}
	if err := t.Store.MarkRead(ctx, threadID, readerID, unread, clock.Now()); err != nil {
		return nil, false, err
	}
	again, err := t.Store.ReadTimes(ctx, unread)
	if err != nil {
		return nil, false, err
	}
	maps.Copy(readAt, again)
	return readAt, true, nil
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
	if err := t.logLatest(ctx, th); err != nil {
		return nil, err
	}
	counts, err := t.Store.ThreadCounts(ctx, th, viewerID)
	if err != nil {
		return nil, err
	}
	summaries, _, err := t.summaries(ctx, []store.Thread{*th}, []store.ThreadCounts{counts})
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

// summaries renders threads with their counts as one participant sees them, and returns the
// hashes of their participants.
func (t *Threads) summaries(ctx context.Context, threads []store.Thread, counts []store.ThreadCounts) ([]Summary, map[string]string, error) {
	var objects []string
	for _, th := range threads {
		objects = append(objects, th.Participants...)
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
		out[i] = Summary{
			ID: th.ID, Participants: participants, Status: th.Status, LastMessageAt: th.LastMessageAt,
			MessageCount: int(counts[i].Messages), UnreadCount: counts[i].Unread(),
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
