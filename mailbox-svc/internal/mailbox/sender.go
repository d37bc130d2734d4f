package mailbox

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/mongox"
)

// SendStore is what a send reads and writes.
type SendStore interface {
	HashStore
	AdmissionStore
	IsBlocked(ctx context.Context, recipientID, senderID string) (bool, error)
	Participants(ctx context.Context, threadID string) ([]string, error)
	Thread(ctx context.Context, id string) (*store.Thread, error)
	InsertThread(ctx context.Context, t *store.Thread) (bool, error)
	InsertMessage(ctx context.Context, m *store.Message) (bool, error)
	LastMessage(ctx context.Context, threadID string) (*store.Message, error)
	Message(ctx context.Context, id string) (*store.Message, error)
	RecordMessage(ctx context.Context, m *store.Message, status string) error
	PutBoxEntries(ctx context.Context, entries []store.BoxEntry, old []string) error
	Idempotency(ctx context.Context, id string) (*store.Idempotency, error)
	BeginIdempotent(ctx context.Context, rec *store.Idempotency) (*store.Idempotency, error)
	FinishIdempotent(ctx context.Context, id string, m *store.Message) error
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
	// BaseURL is the public URL svc answers at: the authority a signed request must be signed
	// for, and the home of senders' key directories.
	BaseURL string
	Log     *slog.Logger
	// places queues this process's replies to one thread (see writeReply).
	places placeLocks
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
	// requestID is the request's, which the send's events carry.
	requestID string
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
	if key != "" {
		return s.sendIdempotent(ctx, requestID, d, key, from, to)
	}
	w, err := s.prepare(ctx, requestID, d, from, to)
	if err != nil {
		return nil, err
	}
	if err := s.write(ctx, w); err != nil {
		return nil, err
	}
	return sent(d, w, false), nil
}

// verifyDraft verifies the sender's own signature of d, if it carries one.
func (s *Sender) verifyDraft(ctx context.Context, d Draft, from *identity.Object) (*store.Signature, error) {
	switch {
	case d.Signature == nil && d.HTTPSignature == nil:
		return nil, nil
	case s.Signing == nil:
		return nil, apierr.BadRequest(CodeInvalidSignature, "this deployment does not verify signatures")
	case d.Signature != nil:
		return s.verify(ctx, d, from)
	}
	return s.verifyRequest(ctx, d, from)
}

// sent is the answer to the send d made by w. It shows a public object's current hash, and a
// private object by the hash the sender used, so that a sender who knows an old hash of a private
// object does not learn the current one.
func sent(d Draft, w *send, replayed bool) *Sent {
	return &Sent{Message: w.message, FromHash: shownHash(w.from, d.FromHash), ToHash: shownHash(w.to, d.ToHash), Replayed: replayed}
}

// shownHash is how an answer names o to a caller who named it by used.
func shownHash(o *identity.Object, used string) string {
	if !contract.Visible(o.Visibility, o.ObjectID, "") {
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
		return nil, nil, apierr.BadRequest(apierr.CodeInvalidRequest, "from_hash and to_hash name the same object")
	}
	return from, to, nil
}

// prepare verifies the sender's signature of the send, if it carries one, checks that the send is
// admitted and builds what it writes, events included.
func (s *Sender) prepare(ctx context.Context, requestID string, d Draft, from, to *identity.Object) (*send, error) {
	sig, err := s.verifyDraft(ctx, d, from)
	if err != nil {
		return nil, err
	}
	// The block check, the recipient's rules and a reply's thread participants are independent
	// reads: they run together.
	var participants []string
	var rules RecipientRules
	var lookupErr, rulesErr error
	var wg sync.WaitGroup
	if d.ThreadID != "" {
		wg.Go(func() { participants, lookupErr = s.Store.Participants(ctx, d.ThreadID) })
	}
	wg.Go(func() { rules, rulesErr = s.RecipientRules(ctx, to) })
	blocked, err := s.Blocked.get(ctx, to.ObjectID, to.ObjectID+"/"+from.ObjectID, func(ctx context.Context) (bool, error) {
		return s.Store.IsBlocked(ctx, to.ObjectID, from.ObjectID)
	})
	wg.Wait()
	switch {
	case err != nil:
		return nil, err
	case rulesErr != nil:
		return nil, rulesErr
	case blocked:
		return nil, apierr.Forbidden(apierr.CodeSenderBlocked, "the recipient does not accept messages from this sender")
	case errors.Is(lookupErr, mongox.ErrNotFound):
		return nil, apierr.NotFound("thread")
	case lookupErr != nil:
		return nil, lookupErr
	case d.ThreadID != "" && !store.Between(participants, from.ObjectID, to.ObjectID):
		return nil, apierr.NotFound("thread")
	}
	messageID := apikey.NewID("msg")
	if sig == nil && signsOnBehalf(d.Caller, from) {
		sig = s.signFor(ctx, d, from, messageID)
	}
	if rules.VerifiedOnly && sig == nil {
		return nil, apierr.Forbidden(CodeSenderUnverified,
			"the recipient accepts only messages whose sender is verified: sign the message or send it with the sender's own key")
	}
	now := clock.Now()
	w := &send{from: from, to: to, requestID: requestID}
	threadID := d.ThreadID
	if threadID == "" {
		w.thread = &store.Thread{
			ID: apikey.NewID("thr"), Participants: []string{from.ObjectID, to.ObjectID},
			Admission: rules.Admission, Status: StatusOpen, CreatedAt: now, LastMessageAt: now, LastMessageID: messageID, LastSeq: 1,
		}
		threadID = w.thread.ID
	}
	w.message = store.Message{
		ID: messageID, ThreadID: threadID, FromID: from.ObjectID, ToID: to.ObjectID,
		Kind: d.Kind, Body: d.Body, CreatedAt: now, Signature: sig,
	}
	if w.thread != nil {
		w.message.Seq = 1
		if w.message.ToID == w.thread.Participants[0] {
			w.message.First, w.thread.LastFirst = 1, 1
		}
	}
	return w, nil
}

// write stores a send so that the recipient's mailbox and the thread list it when it answers:
// the thread (when the send opens one), the message at the next place of its thread with its
// events staged first, the thread's latest-message hint, and the thread's entries in both
// participants' mailboxes, moved up (store.BoxEntry). Every step may be repeated: a retry writes
// the same documents under the same ids, and only the first copy of each gets in.
func (s *Sender) write(ctx context.Context, w *send) error {
	if w.thread != nil {
		return s.writeThread(ctx, w)
	}
	return s.writeReply(ctx, w)
}

// writeThread writes a send that opens its thread: the participants' hash records (once per
// object and process), the thread, the message, the mailbox entries.
func (s *Sender) writeThread(ctx context.Context, w *send) error {
	t, m := w.thread, &w.message
	evs, err := s.stage(ctx, w)
	if err != nil {
		return err
	}
	for _, o := range []*identity.Object{w.from, w.to} {
		if err := s.Store.RememberHash(ctx, o.ObjectID, o.Hash); err != nil {
			return err
		}
	}
	if _, err := s.Store.InsertThread(ctx, t); err != nil {
		return err
	}
	inserted, err := s.Store.InsertMessage(ctx, m)
	if err != nil {
		return err
	}
	if inserted {
		s.Outbox.Confirm(evs...)
	}
	return s.Store.PutBoxEntries(ctx, store.BoxEntries(t, StatusOpen, m.CreatedAt, m.Seq, m.First), nil)
}

// maxPlaceTries bounds how often one reply finds its place taken by a concurrent send.
const maxPlaceTries = 64

// writeReply writes a send in an existing thread: the message goes to the place after the
// thread's latest (its hint; when another send took that place first, after the true last
// message), later than it in time, linked to it (Prev); then the thread's hint is updated and
// its mailbox entries move up, in parallel.
//
// Concurrent replies to one thread compete for one place, and all but one try again: this
// process's replies to a thread take turns (from the thread read to the mailbox entries), so
// they meet only those of other replicas.
func (s *Sender) writeReply(ctx context.Context, w *send) error {
	m := &w.message
	defer s.places.lock(m.ThreadID)()
	th, err := s.Store.Thread(ctx, m.ThreadID)
	if err != nil {
		return notFound(err, "thread")
	}
	after, err := s.takePlace(ctx, w, th)
	if err != nil {
		return err
	}
	boxed := make(chan error, 1)
	go func() {
		boxed <- s.Store.PutBoxEntries(ctx, store.BoxEntries(th, StatusOpen, m.CreatedAt, m.Seq, m.First), store.BoxKeys(th, th.Status, after.CreatedAt))
	}()
	err = s.Store.RecordMessage(ctx, m, StatusOpen)
	return errors.Join(err, <-boxed)
}

// takePlace stores a reply's message at the next free place of thread th, with its events, and
// returns the message it follows.
func (s *Sender) takePlace(ctx context.Context, w *send, th *store.Thread) (*store.Message, error) {
	m := &w.message
	after := &store.Message{ID: th.LastMessageID, Seq: th.LastSeq, First: th.LastFirst, CreatedAt: th.LastMessageAt}
	for try := 0; ; try++ {
		follow(m, after, th)
		evs, err := s.stage(ctx, w)
		if err != nil {
			return nil, err
		}
		inserted, err := s.Store.InsertMessage(ctx, m)
		switch {
		case err == nil:
			if inserted {
				s.Outbox.Confirm(evs...)
			}
			return after, nil
		case !errors.Is(err, store.ErrSeqTaken) || try == maxPlaceTries:
			return nil, err
		}
		if after, err = s.Store.LastMessage(ctx, m.ThreadID); err != nil {
			return nil, err
		}
	}
}

// placeLocks are per-thread locks, held while a reply takes its place; an unused one is dropped.
type placeLocks struct {
	mu   sync.Mutex
	held map[string]*placeLock
}

type placeLock struct {
	sync.Mutex
	users int
}

// lock waits for threadID's lock and returns its release.
func (l *placeLocks) lock(threadID string) (unlock func()) {
	l.mu.Lock()
	if l.held == nil {
		l.held = map[string]*placeLock{}
	}
	p := l.held[threadID]
	if p == nil {
		p = &placeLock{}
		l.held[threadID] = p
	}
	p.users++
	l.mu.Unlock()
	p.Lock()
	return func() {
		p.Unlock()
		l.mu.Lock()
		if p.users--; p.users == 0 {
			delete(l.held, threadID)
		}
		l.mu.Unlock()
	}
}

// follow places m right after message prev of thread th: the next sequence number, the counts
// that follow, and a time later than prev's (the mailbox orders threads by it; times are kept to
// the millisecond, as MongoDB stores them).
func follow(m, prev *store.Message, th *store.Thread) {
	m.Seq, m.Prev, m.First = prev.Seq+1, prev.ID, prev.First
	if m.ToID == th.Participants[0] {
		m.First++
	}
	if !m.CreatedAt.After(prev.CreatedAt) {
		m.CreatedAt = prev.CreatedAt.Truncate(time.Millisecond).Add(time.Millisecond)
	}
}

// stage builds the send's events for the message as it now is and stages them in the outbox,
// before the insert that records their ids.
func (s *Sender) stage(ctx context.Context, w *send) ([]events.Pending, error) {
	m := &w.message
	evs, err := sendEvents(w.requestID, w.from, w.to, w.thread, m)
	if err != nil {
		return nil, err
	}
	m.Events = events.IDs(evs...)
	m.Key = store.MessageKey(m.ThreadID, m.Seq)
	if err := s.Outbox.Stage(ctx, store.Messages, m.Key, evs...); err != nil {
		return nil, err
	}
	return evs, nil
}

// sendIdempotent makes a send under an Idempotency-Key.
func (s *Sender) sendIdempotent(ctx context.Context, requestID string, d Draft, key string, from, to *identity.Object) (*Sent, error) {
	now := clock.Now()
	id := store.IdempotencyID(from.ObjectID, key)
	fingerprint := Fingerprint(from.ObjectID, to.ObjectID, d)
	prev, err := s.Store.Idempotency(ctx, id)
	switch {
	case err == nil && prev.ExpiresAt.After(now):
		return s.resume(ctx, requestID, prev, d, fingerprint, from, to)
	case err != nil && !errors.Is(err, mongox.ErrNotFound):
		return nil, err
	}
	w, err := s.prepare(ctx, requestID, d, from, to)
	if err != nil {
		return nil, err // a refused send records nothing
	}
	rec := &store.Idempotency{ID: id, Fingerprint: fingerprint, Caller: d.idempotencyCaller(), Thread: w.thread, Message: w.message,
		CreatedAt: now, ExpiresAt: now.Add(s.IdempotencyTTL)}
	held, err := s.Store.BeginIdempotent(ctx, rec)
	if err != nil {
		return nil, err
	}
	if held != rec {
		return s.resume(ctx, requestID, held, d, fingerprint, from, to)
	}
	if err := s.write(ctx, w); err != nil {
		return nil, err
	}
	if err := s.Store.FinishIdempotent(ctx, id, &w.message); err != nil {
		return nil, err
	}
	return sent(d, w, false), nil
}

// resume answers a send already recorded under the key, writing whatever of it is missing. A
// record not done yet may be the one a concurrent request is writing: its message is waited for
// (resumeWait), and only a record whose writer stopped is written here.
func (s *Sender) resume(ctx context.Context, requestID string, rec *store.Idempotency, d Draft, fingerprint string, from, to *identity.Object) (*Sent, error) {
	// Records of earlier releases name no caller; they answer as they did until they expire.
	if rec.Caller != "" && rec.Caller != d.idempotencyCaller() {
		return nil, apierr.Conflict(apierr.CodeConflict, "this Idempotency-Key was used by another caller")
	}
	if rec.Fingerprint != fingerprint {
		return nil, apierr.Conflict(apierr.CodeConflict, "this Idempotency-Key was already used for a different message")
	}
	w := &send{from: from, to: to, thread: rec.Thread, message: rec.Message, requestID: requestID}
	if !rec.Done {
		done, err := s.awaitDone(ctx, rec)
		if err != nil {
			return nil, err
		}
		if done != nil {
			w.message = done.Message
			return sent(d, w, true), nil
		}
		if err := s.finish(ctx, w); err != nil {
			return nil, err
		}
		if err := s.Store.FinishIdempotent(ctx, rec.ID, &w.message); err != nil {
			return nil, err
		}
	}
	return sent(d, w, true), nil
}

// resumeWait is how long a resumed send waits for the request that recorded it to finish.
const resumeWait = 2 * time.Second

// awaitDone polls rec until its send is done (the record), for up to resumeWait after it was
// recorded; nil when it was not done by then.
func (s *Sender) awaitDone(ctx context.Context, rec *store.Idempotency) (*store.Idempotency, error) {
	for time.Since(rec.CreatedAt) < resumeWait {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		now, err := s.Store.Idempotency(ctx, rec.ID)
		if err != nil {
			return nil, err
		}
		if now.Done {
			return now, nil
		}
	}
	return nil, nil
}

// finish writes a recorded send whose writer stopped: all of it when its message is not stored,
// else what follows the message (the thread's hint and its mailbox entries).
func (s *Sender) finish(ctx context.Context, w *send) error {
	m, err := s.Store.Message(ctx, w.message.ID)
	if errors.Is(err, mongox.ErrNotFound) {
		return s.write(ctx, w)
	}
	if err != nil {
		return err
	}
	w.message = *m
	th, err := s.Store.Thread(ctx, m.ThreadID)
	if err != nil {
		return err
	}
	if th.LastSeq > m.Seq {
		return nil // a later message moved the thread since
	}
	if err := s.Store.RecordMessage(ctx, m, StatusOpen); err != nil {
		return err
	}
	return s.Store.PutBoxEntries(ctx, store.BoxEntries(th, StatusOpen, m.CreatedAt, m.Seq, m.First), nil)
}
