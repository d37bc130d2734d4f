package mailbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
)

// ThreadStore is what the thread and mailbox reads need.
type ThreadStore interface {
	Thread(ctx context.Context, id string) (*store.Thread, error)
	ThreadPage(ctx context.Context, threadID, after string, limit int) (msgs []store.Message, more bool, err error)
	LastMessage(ctx context.Context, threadID string) (*store.Message, error)
	Mailbox(ctx context.Context, objectID, status, before string, limit int) ([]store.BoxEntry, string, error)
	ReadStates(ctx context.Context, keys []string) (map[string]*store.ReadState, error)
	SaveReadState(ctx context.Context, next *store.ReadState) (bool, error)
	SetThreadStatus(ctx context.Context, id, status string) (*store.Thread, error)
	SetBoxStatus(ctx context.Context, t *store.Thread, status string) error
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
	// Next is the key of the page's last message when more follow, "" on the last page.
	Next string
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
	// Before is the key of the previous page's last thread ("" for the newest), from a cursor
	// bound to MailboxScope.
	Before string
}

// MailboxScope is what a mailbox page cursor is bound to (httpx.KeyCursor): the object's list of
// threads of status ("" for all).
func MailboxScope(objectID, status string) string { return "mailbox:" + objectID + ":" + status }

// ThreadScope is what a thread page cursor is bound to: the thread's list.
func ThreadScope(threadID string) string { return "thread:" + threadID }

// row is what a summary shows of a thread, before hashes.
type row struct {
	id            string
	participants  []string
	status        string
	lastMessageAt time.Time
	messages      int64
	unread        int64
}

// Mailbox lists the threads viewerID takes part in, latest activity first, and the key the next
// page starts below ("" on the last). A send writes its thread's entries in both participants'
// mailboxes before it answers, so the page lists it at once. A page is one read of the mailbox,
// one of the reader's read states of its threads and one of the participants' hashes.
func (t *Threads) Mailbox(ctx context.Context, viewerID string, q MailboxQuery) ([]Summary, string, error) {
	if q.Status != "" && !ValidStatus(q.Status) {
		return nil, "", apierr.BadRequest(apierr.CodeInvalidRequest, "status must be open or archived")
	}
	if q.Before != "" && !strings.HasPrefix(q.Before, store.BoxScope(viewerID, q.Status)) {
		return nil, "", apierr.BadRequest(apierr.CodeInvalidRequest, "cursor is not valid")
	}
	entries, next, err := t.Store.Mailbox(ctx, viewerID, q.Status, q.Before, q.Limit)
	if err != nil || len(entries) == 0 {
		return []Summary{}, next, err
	}
	keys := make([]string, len(entries))
	for i, e := range entries {
		keys[i] = store.ReadStateKey(viewerID, e.ThreadID)
	}
	states, err := t.Store.ReadStates(ctx, keys)
	if err != nil {
		return nil, "", err
	}
	rows := make([]row, len(entries))
	for i, e := range entries {
		rows[i] = row{id: e.ThreadID, participants: e.Participants, status: e.Status, lastMessageAt: e.LastMessageAt,
			messages: e.Messages, unread: max(e.Inbound-states[keys[i]].Read, 0)}
	}
	summaries, _, err := t.summaries(ctx, rows)
	return summaries, next, err
}

// Read shows a page of a thread to one of its participants, oldest message first, after the
// message with key after ("" from the first), and marks the participant's inbound messages of
// that page read. A send stores its message before it answers, so a read right after it shows
// it. Its cost is bounded by the page size: the thread, the page, both participants' read states
// and their hashes (four commands), the thread's last message when the page is not the last, and
// when the page marks something, the reader's read state written.
func (t *Threads) Read(ctx context.Context, viewerID, threadID, after string, limit int) (*ThreadView, error) {
	th, err := t.participantThread(ctx, threadID, viewerID)
	if err != nil {
		return nil, err
	}
	if after != "" && !strings.HasPrefix(after, mongox.Scope(th.ID)) {
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "cursor is not valid")
	}
	msgs, more, err := t.Store.ThreadPage(ctx, th.ID, after, limit)
	if err != nil {
		return nil, err
	}
	states, err := t.readStates(ctx, th)
	if err != nil {
		return nil, err
	}
	mine, err := t.markRead(ctx, th, viewerID, msgs, states[store.ReadStateKey(viewerID, th.ID)])
	if err != nil {
		return nil, err
	}
	states[mine.Key] = mine
	// The thread's last message gives its counts: the page's last when no more follow, else read.
	seq, first, lastAt := th.LastSeq, th.LastFirst, th.LastMessageAt
	if n := len(msgs); n > 0 && !more {
		seq, first, lastAt = msgs[n-1].Seq, msgs[n-1].First, msgs[n-1].CreatedAt
	} else if n > 0 || after != "" {
		last, err := t.Store.LastMessage(ctx, th.ID)
		if err != nil {
			return nil, err
		}
		seq, first, lastAt = last.Seq, last.First, last.CreatedAt
	}
	r := row{id: th.ID, participants: th.Participants, status: th.Status, lastMessageAt: lastAt,
		messages: seq, unread: max(th.Inbound(viewerID, seq, first)-mine.Read, 0)}
	summaries, hashes, err := t.summaries(ctx, []row{r})
	if err != nil {
		return nil, err
	}
	view := &ThreadView{Summary: summaries[0], Admission: th.Admission, Messages: make([]MessageView, 0, len(msgs))}
	if more && len(msgs) > 0 {
		view.Next = msgs[len(msgs)-1].Key
	}
	for _, m := range msgs {
		mv := messageView(&m, hashes)
		if st := states[store.ReadStateKey(m.ToID, th.ID)]; st != nil {
			if at, ok := st.ReadAt(m.Seq); ok {
				mv.ReadAt = &at
			}
		}
		view.Messages = append(view.Messages, mv)
	}
	return view, nil
}

// messageView is message m as a read shows it, its objects named by their current hashes.
func messageView(m *store.Message, hashes map[string]string) MessageView {
	return MessageView{ID: m.ID, FromHash: hashes[m.FromID], ToHash: hashes[m.ToID], Kind: m.Kind, Body: m.Body,
		CreatedAt: m.CreatedAt, Signature: m.Signature}
}

// readStates reads the read states of the thread's participants, in one read.
func (t *Threads) readStates(ctx context.Context, th *store.Thread) (map[string]*store.ReadState, error) {
	var keys []string
	for _, o := range th.Boxes() {
		keys = append(keys, store.ReadStateKey(o, th.ID))
	}
	return t.Store.ReadStates(ctx, keys)
}

// maxMarkTries bounds how often one read finds its reader's read state changed by another read.
const maxMarkTries = 8

// markRead marks read the messages of a page sent to readerID that no read marked before, and
// returns the reader's read state with them.
func (t *Threads) markRead(ctx context.Context, th *store.Thread, readerID string, page []store.Message, st *store.ReadState) (*store.ReadState, error) {
	if len(page) == 0 {
		return st, nil
	}
	at := clock.Now()
	for range maxMarkTries {
		var n int64
		for _, m := range page {
			if _, read := st.ReadAt(m.Seq); m.ToID == readerID && !read {
				n++
			}
		}
		if n == 0 {
			return st, nil
		}
		next := &store.ReadState{Key: st.Key, ReaderID: readerID, ThreadID: th.ID, Version: st.Version + 1, Read: st.Read + n,
			Spans: append(slices.Clone(st.Spans), store.ReadSpan{From: page[0].Seq, To: page[len(page)-1].Seq, At: at, N: n})}
		saved, err := t.Store.SaveReadState(ctx, next)
		if err != nil || saved {
			return next, err
		}
		states, err := t.Store.ReadStates(ctx, []string{st.Key})
		if err != nil {
			return nil, err
		}
		st = states[st.Key]
	}
	return nil, fmt.Errorf("read state %s keeps changing", st.Key)
}

// SetStatus opens or archives a thread; either participant may. The thread moves to the list of
// its new status in both mailboxes.
func (t *Threads) SetStatus(ctx context.Context, viewerID, threadID, status string) (*Summary, error) {
	if !ValidStatus(status) {
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "status must be open or archived")
	}
	th, err := t.participantThread(ctx, threadID, viewerID)
	if err != nil {
		return nil, err
	}
	before, err := t.Store.SetThreadStatus(ctx, th.ID, status)
	if err != nil {
		return nil, notFound(err, "thread")
	}
	if err := t.Store.SetBoxStatus(ctx, before, status); err != nil {
		return nil, err
	}
	r := row{id: th.ID, participants: th.Participants, status: status, lastMessageAt: th.LastMessageAt}
	last, err := t.Store.LastMessage(ctx, th.ID)
	switch {
	case err == nil:
		r.lastMessageAt, r.messages = last.CreatedAt, last.Seq
		states, err := t.Store.ReadStates(ctx, []string{store.ReadStateKey(viewerID, th.ID)})
		if err != nil {
			return nil, err
		}
		r.unread = max(th.Inbound(viewerID, last.Seq, last.First)-states[store.ReadStateKey(viewerID, th.ID)].Read, 0)
	case !errors.Is(err, mongox.ErrNotFound):
		return nil, err
	}
	summaries, _, err := t.summaries(ctx, []row{r})
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
		return nil, apierr.NotFound("thread")
	}
	th, err := t.Store.Thread(ctx, id)
	if err != nil {
		return nil, notFound(err, "thread")
	}
	if !th.Has(objectID) {
		return nil, apierr.NotFound("thread")
	}
	return th, nil
}

// summaries renders rows as one participant sees them, and returns the hashes of their
// participants.
func (t *Threads) summaries(ctx context.Context, rows []row) ([]Summary, map[string]string, error) {
	var objects []string
	for _, r := range rows {
		objects = append(objects, r.participants...)
	}
	slices.Sort(objects)
	hashes, err := t.Names.Hashes(ctx, slices.Compact(objects))
	if err != nil {
		return nil, nil, err
	}
	out := make([]Summary, len(rows))
	for i, r := range rows {
		participants := make([]string, len(r.participants))
		for j, id := range r.participants {
			participants[j] = hashes[id]
		}
		out[i] = Summary{
			ID: r.id, Participants: participants, Status: r.status, LastMessageAt: r.lastMessageAt,
			MessageCount: int(r.messages), UnreadCount: int(r.unread),
		}
	}
	return out, hashes, nil
}

// notFound maps the store's not-found to the public 404 naming what.
func notFound(err error, what string) error {
	if errors.Is(err, mongox.ErrNotFound) {
		return apierr.NotFound(what)
	}
	return err
}
