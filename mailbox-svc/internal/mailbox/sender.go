package mailbox

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/mongox"
)

// SendStore is what a send reads and writes.
type SendStore interface {
	HashStore
	AdmissionStore
	IsBlocked(ctx context.Context, recipientID, senderID string) (bool, error)
	Participants(ctx context.Context, threadID string) ([]string, error)
	InsertThread(ctx context.Context, t *store.Thread) (bool, error)
	InsertMessage(ctx context.Context, m *store.Message) (bool, error)
	TouchThread(ctx context.Context, id, messageID string, at time.Time, status string) (prev string, err error)
	Idempotency(ctx context.Context, id string) (*store.Idempotency, error)
	BeginIdempotent(ctx context.Context, rec *store.Idempotency) (*store.Idempotency, error)
	FinishIdempotent(ctx context.Context, id string) error
	ClaimNonce(ctx context.Context, senderID, nonce string, expiresAt time.Time) (bool, error)
}

// Sender sends messages: it checks that a send is admitted, opens or continues the thread, and
// writes the send with its events, at most once per Idempotency-Key.
type Sender struct {
	Store SendStore
	Names *Names
	// Blocked caches the block check; nil reads the store on every send. Blocks must share it.
	Blocked *BlockCache
	// Admissions caches the recipient's projected rules; nil reads the store on every send. The
	// admissions consumer must share it.
	Admissions *AdmissionCache
	// Rules reads a recipient's rules from context-svc, and RulesGuard tells when it must (see
	// RecipientRules); with either nil, sends follow the projection alone.
	Rules      RulesReader
	RulesGuard RulesGuard
	Outbox     Outbox
	// IdempotencyTTL is how long an Idempotency-Key is remembered.
	IdempotencyTTL time.Duration
	// Signing verifies senders' signatures and signs sends made with the sender's own key; nil
	// refuses signed sends and signs nothing.
	Signing Signing
	// SignatureSkew bounds how far a signature's signed_at may be from now (DefaultSkew if 0).
	SignatureSkew time.Duration
	Log           *slog.Logger
}

// Sent is the answer to a send.
type Sent struct {
	Message store.Message
	// FromHash and ToHash are the sender's and the recipient's hashes as the answer shows them.
	FromHash, ToHash string
	// Replayed marks the answer to a retry of an earlier send with the same Idempotency-Key.
	Replayed bool
}

// send is what a message send writes: the message, and the thread when it opens one.
type send struct {
	from, to *identity.Object
	thread   *store.Thread
	message  store.Message
	events   []events.Pending
}

// Send sends the message d. A non-empty key makes the send idempotent: the first request with
// the key records the send it makes before writing it; any later one, concurrent or not,
// finishes and answers that same send.
func (s *Sender) Send(ctx context.Context, requestID string, d Draft, key string) (*Sent, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	from, to, err := s.addressees(ctx, d)
	if err != nil {
		return nil, err
	}
	if key == "" {
		sig, err := s.verifyDraft(ctx, d, from)
		if err != nil {
			return nil, err
		}
		w, err := s.prepare(ctx, requestID, d, from, to, sig)
		if err != nil {
			return nil, err
		}
		if err := s.write(ctx, w); err != nil {
			return nil, err
		}
		return sent(d, w, false), nil
	}
	return s.sendIdempotent(ctx, requestID, d, key, from, to)
}

// verifyDraft verifies the sender's own signature of d, if it carries one.
func (s *Sender) verifyDraft(ctx context.Context, d Draft, from *identity.Object) (*store.Signature, error) {
	if d.Signature == nil {
		return nil, nil
	}
	return s.verify(ctx, d, from)
}

// sent is the answer to the send d made by w. It shows a public object's current hash, and a
// private object by the hash the sender used, so that a sender who knows an old hash of a private
// object does not learn the current one.
func sent(d Draft, w *send, replayed bool) *Sent {
	return &Sent{Message: w.message, FromHash: shownHash(w.from, d.FromHash), ToHash: shownHash(w.to, d.ToHash), Replayed: replayed}
}

// visibilityPrivate is the visibility of an object hidden from everyone but its owner.
const visibilityPrivate = "private"

// shownHash is how an answer names o to a caller who named it by used.
func shownHash(o *identity.Object, used string) string {
	if o.Visibility == visibilityPrivate {
		return used
	}
	return o.Hash
}

// addressees resolves the sender and the recipient.
func (s *Sender) addressees(ctx context.Context, d Draft) (from, to *identity.Object, err error) {
	if to, err = s.Names.Resolve(ctx, d.ToHash, "recipient object"); err != nil {
		return nil, nil, err
	}
	if from, err = s.Names.Resolve(ctx, d.FromHash, "sender object"); err != nil {
		return nil, nil, err
	}
	if from.ObjectID == to.ObjectID && !d.Notice {
		return nil, nil, httpx.BadRequest(httpx.CodeInvalidRequest, "from_hash and to_hash name the same object")
	}
	return from, to, nil
}

// prepare checks that the send is admitted and builds what it writes, events included.
func (s *Sender) prepare(ctx context.Context, requestID string, d Draft, from, to *identity.Object, sig *store.Signature) (*send, error) {
	// The block check, the recipient's rules and a reply's thread participants are independent
	// reads: they run together.
	var participants []string
	var rules RecipientRules
	var lookupErr, rulesErr error
	looked := make(chan struct{})
	go func() {
		defer close(looked)
		if d.ThreadID != "" {
			participants, lookupErr = s.Store.Participants(ctx, d.ThreadID)
		}
	}()
	ruled := make(chan struct{})
	go func() {
		defer close(ruled)
		rules, rulesErr = s.RecipientRules(ctx, to)
	}()
	blocked, err := s.Blocked.blocked(ctx, to.ObjectID, from.ObjectID, func(ctx context.Context) (bool, error) {
		return s.Store.IsBlocked(ctx, to.ObjectID, from.ObjectID)
	})
	<-looked
	<-ruled
	switch {
	case err != nil:
		return nil, err
	case rulesErr != nil:
		return nil, rulesErr
	case blocked:
		return nil, httpx.Forbidden(httpx.CodeSenderBlocked, "the recipient does not accept messages from this sender")
	case errors.Is(lookupErr, mongox.ErrNotFound):
		return nil, httpx.NotFound("thread")
	case lookupErr != nil:
		return nil, lookupErr
	case d.ThreadID != "" && !store.Between(participants, from.ObjectID, to.ObjectID):
		return nil, httpx.NotFound("thread")
	}
	messageID := apikey.NewID("msg")
	if sig == nil && signsOnBehalf(d.Caller, from) {
		sig = s.signFor(ctx, d, from, messageID)
	}
	if rules.VerifiedOnly && sig == nil {
		return nil, httpx.Forbidden(CodeSenderUnverified,
			"the recipient accepts only messages whose sender is verified: sign the message or send it with the sender's own key")
	}
	now := clock.Now()
	w := &send{from: from, to: to}
	threadID := d.ThreadID
	if threadID == "" {
		w.thread = &store.Thread{
			ID: apikey.NewID("thr"), Participants: []string{from.ObjectID, to.ObjectID},
			Admission: rules.Admission, Status: StatusOpen, CreatedAt: now, LastMessageAt: now, LastMessageID: messageID,
		}
		threadID = w.thread.ID
	}
	w.message = store.Message{
		ID: messageID, ThreadID: threadID, FromID: from.ObjectID, ToID: to.ObjectID,
		Kind: d.Kind, Body: d.Body, CreatedAt: now, Signature: sig,
	}
	if w.events, err = sendEvents(requestID, from, to, w.thread, &w.message); err != nil {
		return nil, err
	}
	w.message.Events = events.IDs(w.events...)
	return w, nil
}

// write stores a send: the hashes of a new thread's participants, the thread and the staging of
// the message's events (together: neither needs the other), then the message (whose events are
// confirmed once it is in). A reply moves its thread up, reopens it and takes the thread's latest
// message until now as the message's Prev in one command, beside the staging. Every step may be
// repeated: a retry writes the same documents under the same ids, and only the first copy of
// each gets in. The commands are the fewest the outbox allows: the staging insert before the
// message insert that records the events, and nothing else but the documents themselves; the
// thread's list and the mailboxes are the projection's (consumers.Lists).
func (s *Sender) write(ctx context.Context, w *send) error {
	m := &w.message
	staged := make(chan error, 1)
	go func() { staged <- s.Outbox.Stage(ctx, store.Messages, m.ID, w.events...) }()
	var err error
	if t := w.thread; t != nil {
		for _, o := range []*identity.Object{w.from, w.to} {
			if err := s.Store.RememberHash(ctx, o.ObjectID, o.Hash); err != nil {
				return errors.Join(err, <-staged)
			}
		}
		_, err = s.Store.InsertThread(ctx, t)
	} else {
		var prev string
		prev, err = s.Store.TouchThread(ctx, m.ThreadID, m.ID, m.CreatedAt, StatusOpen)
		if prev != m.ID { // a retry finds its own message there
			m.Prev = prev
		}
	}
	if err := errors.Join(err, <-staged); err != nil {
		return err
	}
	inserted, err := s.Store.InsertMessage(ctx, m)
	if err != nil {
		return err
	}
	if inserted {
		s.Outbox.Confirm(w.events...)
	}
	return nil
}

// sendIdempotent makes a send under an Idempotency-Key.
func (s *Sender) sendIdempotent(ctx context.Context, requestID string, d Draft, key string, from, to *identity.Object) (*Sent, error) {
	now := clock.Now()
	id := store.IdempotencyID(from.ObjectID, d.idempotencyScope()+"/"+key)
	fingerprint := Fingerprint(from.ObjectID, to.ObjectID, d)
	prev, err := s.Store.Idempotency(ctx, id)
	switch {
	case err == nil && prev.ExpiresAt.After(now):
		return s.resume(ctx, prev, d, fingerprint, from, to)
	case err != nil && !errors.Is(err, mongox.ErrNotFound):
		return nil, err
	}
	sig, err := s.verifyDraft(ctx, d, from)
	if err != nil {
		return nil, err
	}
	w, err := s.prepare(ctx, requestID, d, from, to, sig)
	if err != nil {
		return nil, err // a refused send records nothing
	}
	rec := &store.Idempotency{ID: id, Fingerprint: fingerprint, Thread: w.thread, Message: w.message, Events: w.events,
		CreatedAt: now, ExpiresAt: now.Add(s.IdempotencyTTL)}
	held, err := s.Store.BeginIdempotent(ctx, rec)
	if err != nil {
		return nil, err
	}
	if held != rec {
		return s.resume(ctx, held, d, fingerprint, from, to)
	}
	if err := s.write(ctx, w); err != nil {
		return nil, err
	}
	if err := s.Store.FinishIdempotent(ctx, id); err != nil {
		return nil, err
	}
	return sent(d, w, false), nil
}

// resume answers a send already recorded under the key, writing whatever of it is missing.
func (s *Sender) resume(ctx context.Context, rec *store.Idempotency, d Draft, fingerprint string, from, to *identity.Object) (*Sent, error) {
	if rec.Fingerprint != fingerprint {
		return nil, httpx.Conflict(httpx.CodeConflict, "this Idempotency-Key was already used for a different message")
	}
	w := &send{from: from, to: to, thread: rec.Thread, message: rec.Message, events: rec.Events}
	if !rec.Done {
		if err := s.write(ctx, w); err != nil {
			return nil, err
		}
		if err := s.Store.FinishIdempotent(ctx, rec.ID); err != nil {
			return nil, err
		}
	}
	return sent(d, w, true), nil
}
