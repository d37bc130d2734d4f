package http

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
)

// Headers of idempotent sends.
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	HeaderReplayed       = "Idempotent-Replayed"
)

type sendRequest struct {
	FromHash *string `json:"from_hash"`
	ToHash   *string `json:"to_hash"`
	Kind     *string `json:"kind"`
	Body     *string `json:"body"`
	ThreadID *string `json:"thread_id"`
}

type messageResponse struct {
	ID        string `json:"id"`
	ThreadID  string `json:"thread_id"`
	FromHash  string `json:"from_hash"`
	ToHash    string `json:"to_hash"`
	Kind      string `json:"kind"`
	Body      string `json:"body"`
	CreatedAt string `json:"created_at"`
}

// send is what a message send writes: the message, and the thread when it opens one.
type send struct {
	from, to *identity.Object
	thread   *store.Thread
	message  store.Message
	events   []events.Pending
	// replayed marks the answer to a retry of an earlier send with the same Idempotency-Key.
	replayed bool
}

func (h *Handler) sendMessage(c *gin.Context) {
	d, key, err := decodeSend(c)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	ctx := c.Request.Context()
	from, to, err := h.addressees(ctx, d)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	var s *send
	if key != "" {
		s, err = h.sendIdempotent(c, d, key, from, to)
	} else {
		s, err = h.prepare(c, d, from, to)
		if err == nil {
			err = h.write(ctx, s)
		}
	}
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	if s.replayed {
		c.Header(HeaderReplayed, "true")
	}
	m := s.message
	c.JSON(http.StatusCreated, messageResponse{
		ID: m.ID, ThreadID: m.ThreadID, FromHash: from.Hash, ToHash: to.Hash, Kind: m.Kind, Body: m.Body,
		CreatedAt: clock.Format(m.CreatedAt),
	})
}

// decodeSend reads and validates the body and the Idempotency-Key header.
func decodeSend(c *gin.Context) (mailbox.Draft, string, error) {
	var req sendRequest
	if err := httpx.Decode(c, &req); err != nil {
		return mailbox.Draft{}, "", err
	}
	for _, f := range []struct {
		name  string
		value *string
	}{{"from_hash", req.FromHash}, {"to_hash", req.ToHash}, {"kind", req.Kind}, {"body", req.Body}} {
		if f.value == nil {
			return mailbox.Draft{}, "", httpx.MissingField(f.name)
		}
	}
	d := mailbox.Draft{FromHash: *req.FromHash, ToHash: *req.ToHash, Kind: *req.Kind, Body: *req.Body}
	if req.ThreadID != nil {
		d.ThreadID = *req.ThreadID
	}
	if err := d.Validate(); err != nil {
		return mailbox.Draft{}, "", err
	}
	key, present := c.Request.Header[HeaderIdempotencyKey]
	if present && (len(key) != 1 || !mailbox.ValidIdempotencyKey(key[0])) {
		return mailbox.Draft{}, "", httpx.BadRequest(httpx.CodeInvalidRequest,
			"%s must be 1 to %d visible ASCII characters", HeaderIdempotencyKey, mailbox.MaxIdempotencyKey)
	}
	if present {
		return d, key[0], nil
	}
	return d, "", nil
}

// addressees resolves the sender and the recipient.
func (h *Handler) addressees(ctx context.Context, d mailbox.Draft) (from, to *identity.Object, err error) {
	if to, err = h.resolve(ctx, d.ToHash, "recipient object"); err != nil {
		return nil, nil, err
	}
	if from, err = h.resolve(ctx, d.FromHash, "sender object"); err != nil {
		return nil, nil, err
	}
	if from.ObjectID == to.ObjectID {
		return nil, nil, httpx.BadRequest(httpx.CodeInvalidRequest, "from_hash and to_hash name the same object")
	}
	return from, to, nil
}

// prepare checks that the send is admitted and builds what it writes, events included.
func (h *Handler) prepare(c *gin.Context, d mailbox.Draft, from, to *identity.Object) (*send, error) {
	ctx := c.Request.Context()
	blocked, err := h.Store.IsBlocked(ctx, to.ObjectID, from.ObjectID)
	if err != nil {
		return nil, err
	}
	if blocked {
		return nil, httpx.Forbidden(httpx.CodeSenderBlocked, "the recipient does not accept messages from this sender")
	}
	now := clock.Now()
	s := &send{from: from, to: to}
	threadID := d.ThreadID
	if threadID != "" {
		t, err := h.Store.Thread(ctx, threadID)
		if err != nil || !t.Between(from.ObjectID, to.ObjectID) {
			return nil, storeError(orNotFound(err), "thread")
		}
	} else {
		s.thread = &store.Thread{
			ID: apikey.NewID("thr"), Participants: []string{from.ObjectID, to.ObjectID},
			Admission: h.Rules.Admission(ctx, to.ObjectID), Status: mailbox.StatusOpen,
			CreatedAt: now, LastMessageAt: now,
		}
		threadID = s.thread.ID
	}
	s.message = store.Message{
		ID: apikey.NewID("msg"), ThreadID: threadID, FromID: from.ObjectID, ToID: to.ObjectID,
		Kind: d.Kind, Body: d.Body, CreatedAt: now,
	}
	if s.events, err = sendEvents(s, httpx.RequestID(c)); err != nil {
		return nil, err
	}
	s.message.Events = events.IDs(s.events...)
	return s, nil
}

// orNotFound turns "found, but not the thread between these two" into not found.
func orNotFound(err error) error {
	if err == nil {
		return store.ErrNotFound
	}
	return err
}

// sendEvents are the events of a send, recorded by the message's own insert: thread.created when
// it opens the thread, then message.created. Both belong to the recipient.
func sendEvents(s *send, requestID string) ([]events.Pending, error) {
	m := &s.message
	var out []events.Pending
	if t := s.thread; t != nil {
		ev, err := events.New(events.TopicMailbox, events.ThreadCreated, s.to.ObjectID, s.to.Hash, requestID,
			contract.ThreadCreatedData{
				ThreadID: t.ID, ParticipantAdmission: t.Admission, CreatedAt: clock.Format(t.CreatedAt),
				Participants: []contract.Participant{{ObjectID: s.from.ObjectID, Hash: s.from.Hash}, {ObjectID: s.to.ObjectID, Hash: s.to.Hash}},
			})
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	ev, err := events.New(events.TopicMailbox, events.MessageCreated, s.to.ObjectID, s.to.Hash, requestID,
		contract.MessageCreatedData{
			MessageID: m.ID, ThreadID: m.ThreadID, FromObjectID: m.FromID, FromHash: s.from.Hash,
			ToObjectID: m.ToID, ToHash: s.to.Hash, Kind: m.Kind, Body: m.Body, CreatedAt: clock.Format(m.CreatedAt),
		})
	if err != nil {
		return nil, err
	}
	return append(out, ev), nil
}

// write stores a send. Every step may be repeated: a retry writes the same documents under the
// same ids, and only the first copy of each gets in.
func (h *Handler) write(ctx context.Context, s *send) error {
	m := &s.message
	if t := s.thread; t != nil {
		for _, o := range []*identity.Object{s.from, s.to} {
			if err := h.Store.RememberHash(ctx, o.ObjectID, o.Hash); err != nil {
				return err
			}
		}
		if _, err := h.Store.InsertThread(ctx, t); err != nil {
			return err
		}
	}
	if err := h.Outbox.Stage(ctx, store.Messages, m.ID, s.events...); err != nil {
		return err
	}
	inserted, err := h.Store.InsertMessage(ctx, m)
	if err != nil {
		return err
	}
	if s.thread == nil {
		if err := h.Store.TouchThread(ctx, m.ThreadID, m.CreatedAt, mailbox.StatusOpen); err != nil {
			return err
		}
	}
	if inserted {
		h.Outbox.Confirm(s.events...)
	}
	return nil
}

// sendIdempotent makes a send with an Idempotency-Key: the first request with the key records
// the send it makes before writing it; any later one, concurrent or not, finishes and answers
// that same send.
func (h *Handler) sendIdempotent(c *gin.Context, d mailbox.Draft, key string, from, to *identity.Object) (*send, error) {
	ctx := c.Request.Context()
	now := clock.Now()
	id := store.IdempotencyID(from.ObjectID, key)
	fingerprint := mailbox.Fingerprint(from.ObjectID, to.ObjectID, d)
	prev, err := h.Store.Idempotency(ctx, id)
	switch {
	case err == nil && prev.ExpiresAt.After(now):
		return h.resume(ctx, prev, fingerprint, from, to)
	case err != nil && err != store.ErrNotFound:
		return nil, err
	}
	s, err := h.prepare(c, d, from, to)
	if err != nil {
		return nil, err // a refused send records nothing
	}
	rec := &store.Idempotency{ID: id, Fingerprint: fingerprint, Thread: s.thread, Message: s.message, Events: s.events,
		CreatedAt: now, ExpiresAt: now.Add(h.IdempotencyTTL)}
	held, err := h.Store.BeginIdempotent(ctx, rec)
	if err != nil {
		return nil, err
	}
	if held != rec {
		return h.resume(ctx, held, fingerprint, from, to)
	}
	if err := h.write(ctx, s); err != nil {
		return nil, err
	}
	return s, h.Store.FinishIdempotent(ctx, id)
}

// resume answers a send already recorded under the key, writing whatever of it is missing.
func (h *Handler) resume(ctx context.Context, rec *store.Idempotency, fingerprint string, from, to *identity.Object) (*send, error) {
	if rec.Fingerprint != fingerprint {
		return nil, httpx.Conflict(httpx.CodeConflict, "this Idempotency-Key was already used for a different message")
	}
	s := &send{from: from, to: to, thread: rec.Thread, message: rec.Message, events: rec.Events, replayed: true}
	if rec.Done {
		return s, nil
	}
	if err := h.write(ctx, s); err != nil {
		return nil, err
	}
	return s, h.Store.FinishIdempotent(ctx, rec.ID)
}
