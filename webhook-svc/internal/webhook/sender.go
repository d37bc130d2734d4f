package webhook

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// SendStore is what the sender reads and writes: the schedule, the deliveries and their attempts,
// and the subscriptions and their health. Every read and write the poll makes covers a page of
// due deliveries at once.
type SendStore interface {
	SubscriptionsByID(ctx context.Context, ids []string) (map[string]*store.Subscription, error)
	Health(ctx context.Context, id string) (*store.SubscriptionHealth, error)
	Healths(ctx context.Context, ids []string) (map[string]*store.SubscriptionHealth, error)
	PutHealth(ctx context.Context, h *store.SubscriptionHealth) error
	DeliveriesByID(ctx context.Context, ids []string) (map[string]*store.Delivery, error)
	ReplaceDeliveries(ctx context.Context, ds ...*store.Delivery) error
	DueEntries(ctx context.Context, after string, now time.Time, limit int) ([]store.DueEntry, error)
	InsertDue(ctx context.Context, entries ...store.DueEntry) error
	DeleteDue(ctx context.Context, entries ...store.DueEntry) error
	Claim(ctx context.Context, keys ...string) ([]bool, error)
	LogAttempts(ctx context.Context, lines ...store.LogLine) error
}

// Sender makes delivery attempts. Every attempt is claimed first by inserting the key of
// <delivery>/<attempt>/<slot> (store.ClaimKey): the first insert wins, so two replicas never make the same
// attempt. The slot is 0 for the attempt made as the event is consumed, and after that counts
// leases since the attempt came due, so that when the replica holding a claim dies, another one
// claims the next slot once the lease has passed and the delivery is not lost.
//
// The sender finds due deliveries through the schedule (store.DueEntry), never by scanning the
// deliveries: every pending delivery has an entry no later than its next attempt. Whoever writes
// a delivery's outcome orders that write and its entry's so that this holds at every step (see
// write); a replica stopping between leaves an entry that is early, which the poll moves, or one
// of a final delivery, which the poll deletes. The poll (poll.go) handles a page of due entries
// with a handful of commands, whatever the number of deliveries in it: one read of the page, one
// of its deliveries, one insert of its claims, one read of the deliveries won, their
// subscriptions and health, and the outcomes recorded together (record).
type Sender struct {
	Store SendStore
	// HTTP is the guarded outbound client: no redirects, the delivery timeout, private addresses
	// refused at dial time.
	HTTP  *http.Client
	Retry RetryStrategy
	// Lease is how long a claim is trusted; it must exceed the delivery timeout.
	Lease time.Duration
	// DisableAfter disables a subscription whose endpoint has failed for that long.
	DisableAfter time.Duration
	// PollInterval is how often due deliveries are looked for; Workers bounds parallel attempts.
	PollInterval time.Duration
	Workers      int
	Log          *slog.Logger

	// Subscribers gives a subscription as it is now (one Redis read while unchanged), so that a
	// queued first attempt of a deleted or disabled subscription is dropped before it is sent.
	Subscribers Subscribers
	// Timeout bounds one POST (the outbound client's timeout); a lane starts a first attempt only
	// when the POST and its record can finish before the delivery's lease ends.
	Timeout time.Duration
	// Lanes bounds the subscriptions with first attempts queued in this process, LaneDepth the
	// attempts queued for one of them, LaneQueue the attempts queued in all. A delivery past a
	// bound is left to the schedule, due at once.
	Lanes, LaneDepth, LaneQueue int
	// Notices, when set, stages the events of a subscription disabled or a delivery given up.
	Notices Notifier

	lanes lanes
	busy  sync.WaitGroup
	// recording bounds the outcomes of first attempts waiting to be recorded; recQueue holds them
	// for the one goroutine that records them in batches while recRunning.
	recordOnce sync.Once
	recording  chan struct{}
	recMu      sync.Mutex
	recQueue   []firstRecord
	recRunning bool

	// finished are the entries of the deliveries that became final since the last flush, and of
	// the entries a page of the poll found stale; they are deleted together, one command per page
	// rather than one per delivery.
	finMu    sync.Mutex
	finished []store.DueEntry
}

// result is what one POST gave.
type result struct {
	attempt    store.Attempt
	retryAfter time.Duration
	err        error
}

func (s *Sender) post(ctx context.Context, sub *store.Subscription, d *store.Delivery) result {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.CallbackURL, strings.NewReader(d.Body))
	if err != nil {
		return result{attempt: store.Attempt{At: clock.Now(), Error: "the callback URL cannot be requested"}, err: err}
	}
	for name, value := range sub.Headers {
		req.Header.Set(name, value)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-svc-event", d.Event)
	req.Header.Set("webhook-id", d.EventID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(start.Unix(), 10))
	req.Header.Set("webhook-signature", Sign(signingSecrets(sub.Secrets, start), d.EventID, start, []byte(d.Body)))
	resp, err := s.HTTP.Do(req)
	at := store.Attempt{At: start.UTC().Truncate(time.Millisecond)}
	if err != nil {
		at.DurationMS = time.Since(start).Milliseconds()
		at.Error = describe(err)
		return result{attempt: at, err: err}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	at.DurationMS = time.Since(start).Milliseconds()
	at.StatusCode = resp.StatusCode
	return result{attempt: at, retryAfter: retryAfter(resp.Header, time.Now())}
}

// describe says why a request failed without echoing the request (its headers are secret).
func describe(err error) string {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			err = inner
		}
	}
	msg := err.Error()
	if len(msg) > 300 {
		msg = msg[:300]
	}
	return msg
}

// attempt is one attempt of a delivery, from its POST (or the reason it is not sent) to the record
// of its outcome.
type attempt struct {
	sub *store.Subscription
	// h is the endpoint's health as read before the attempt; the attempts of one subscription in
	// a page share it, so that their record sees what the earlier ones wrote.
	h   *store.SubscriptionHealth
	d   *store.Delivery
	res result
	// unsent, when set, is why the delivery fails without a POST: its subscription was deleted
	// or disabled (sub is nil when deleted).
	unsent string
	// end is when the claim of a polled attempt lapses (zero for a lane's first attempt).
	end time.Time
}

// outcome applies an attempt's result to its delivery: 2xx succeeds; 410 fails (and disables the
// subscription, see noteHealth); 401 is retried once; network errors, 429 and 5xx follow the
// retry schedule; anything else fails. It reports whether the delivery was given up after its
// retries.
func (s *Sender) outcome(d *store.Delivery, res result, now time.Time) (givenUp bool) {
	d.Attempts = append(d.Attempts, res.attempt)
	code := res.attempt.StatusCode
	retry := false
	switch {
	case res.err == nil && code >= 200 && code < 300:
		d.Status, d.NextAttemptAt = store.StatusSucceeded, nil
	case code == http.StatusGone:
		d.Status, d.NextAttemptAt = store.StatusFailed, nil
	case code == http.StatusUnauthorized:
		retry = !slices.ContainsFunc(d.Attempts[:len(d.Attempts)-1], func(a store.Attempt) bool {
			return a.StatusCode == http.StatusUnauthorized
		})
	case res.err != nil, code == http.StatusTooManyRequests, code >= 500:
		retry = true
	default:
		d.Status, d.NextAttemptAt = store.StatusFailed, nil
	}
	if d.Status != store.StatusPending {
		return false
	}
	if delay, ok := s.Retry.NextDuration(len(d.Attempts)-1, res.retryAfter); retry && ok {
		next := now.Add(delay)
		d.NextAttemptAt = &next
		return false
	}
	d.Status, d.NextAttemptAt = store.StatusFailed, nil
	return retry
}

// record applies the outcomes of attempts and stores them together (ctx is the callers' budget
// for the writes), so that a page of attempts costs a few commands, not a few per attempt: the
// endpoints' health first (noteHealth, once per subscription and only when it changes), so that
// whoever sees a delivery's outcome also sees its effect on the endpoint; then the notices of
// deliveries given up, staged before the deliveries that record them (events.Outbox); the
// deliveries and their places in the schedule (write); and last their log lines (logAttempts).
func (s *Sender) record(ctx context.Context, as []attempt) error {
	now := clock.Now()
	changes := make([]change, len(as))
	var subs []string // in the order of their first attempt
	notes := map[string]*healthNotes{}
	var givenUp []attempt // with the notice of each in staged
	var staged []events.Pending
	for i, a := range as {
		changes[i] = change{d: a.d, prev: a.d.NextAttemptAt}
		if a.unsent != "" {
			a.d.Status, a.d.NextAttemptAt = store.StatusFailed, nil
			a.d.Attempts = append(a.d.Attempts, store.Attempt{At: now, Error: a.unsent})
			continue
		}
		gaveUp := s.outcome(a.d, a.res, now)
		n := notes[a.sub.ID]
		if n == nil {
			n = &healthNotes{sub: a.sub, h: a.h}
			notes[a.sub.ID], subs = n, append(subs, a.sub.ID)
		}
		n.ok = append(n.ok, a.d.Status == store.StatusSucceeded)
		n.gone = n.gone || a.res.attempt.StatusCode == http.StatusGone
		if ev, ok := s.givenUpNotice(a.sub, a.d, now); gaveUp && ok {
			givenUp, staged = append(givenUp, a), append(staged, ev)
			a.d.Events = []string{ev.ID}
		}
	}
	for _, id := range subs {
		if err := s.noteHealth(ctx, notes[id], now); err != nil {
			return err
		}
	}
	for i, a := range givenUp {
		// Staged before the delivery that records it is written (events.Outbox).
		if err := s.Notices.Stage(ctx, store.Deliveries, a.d.ID, staged[i]); err != nil {
			return err
		}
	}
	if err := s.write(ctx, changes); err != nil {
		return err
	}
	if len(staged) > 0 {
		s.Notices.Confirm(staged...)
	}
	s.logAttempts(ctx, as)
	return nil
}

// logAttempts appends the deliveries' latest attempts to their subscriptions' delivery logs, in
// one command, after the deliveries (the truth) are written: a failure here loses log lines,
// never a delivery. A deleted subscription's log is read by no one.
func (s *Sender) logAttempts(ctx context.Context, as []attempt) {
	lines := make([]store.LogLine, 0, len(as))
	for _, at := range as {
		d := at.d
		if at.unsent == reasonDeleted {
			continue
		}
		a := d.Attempts[len(d.Attempts)-1]
		outcome := store.OutcomeRetrying
		switch d.Status {
		case store.StatusSucceeded:
			outcome = store.OutcomeSucceeded
		case store.StatusFailed:
			outcome = store.OutcomeFailed
		}
		lines = append(lines, store.LogLine{SubscriptionID: d.SubscriptionID, AttemptEntry: store.AttemptEntry{
			DeliveryID: d.ID, EventID: d.EventID, Event: d.Event, Attempt: len(d.Attempts), Outcome: outcome,
			StatusCode: a.StatusCode, Error: a.Error, DurationMS: a.DurationMS, At: a.At}})
	}
	if len(lines) == 0 {
		return
	}
	if err := s.Store.LogAttempts(ctx, lines...); err != nil {
		s.Log.Warn("logging delivery attempts failed", "attempts", len(lines), "error", err)
	}
}

// change is a delivery's new state, with the next attempt stored so far (where its entry is).
type change struct {
	d    *store.Delivery
	prev *time.Time
}

// write stores deliveries' outcomes and their places in the schedule, in the order that keeps an
// entry no later than each stored next attempt at every step: the entries at the new next
// attempts are inserted (one command) before the deliveries are written (one each), and those at prev
// deleted after (one); the entries of final deliveries go with the next flush. A replica stopping
// in between leaves an early entry, which the poll moves, or one of a final delivery, which the
// poll deletes.
func (s *Sender) write(ctx context.Context, cs []change) error {
	var add, drop, final []store.DueEntry
	ds := make([]*store.Delivery, len(cs))
	for i, c := range cs {
		ds[i] = c.d
		var old store.DueEntry
		if c.prev != nil {
			old = store.Due(c.d.ID, *c.prev)
		}
		switch {
		case c.d.Status != store.StatusPending || c.d.NextAttemptAt == nil:
			if c.prev != nil {
				final = append(final, old)
			}
		case c.prev != nil && store.Due(c.d.ID, *c.d.NextAttemptAt).Key == old.Key:
		default:
			add = append(add, store.Due(c.d.ID, *c.d.NextAttemptAt))
			if c.prev != nil {
				drop = append(drop, old)
			}
		}
	}
	if err := s.Store.InsertDue(ctx, add...); err != nil {
		return err
	}
	if err := s.Store.ReplaceDeliveries(ctx, ds...); err != nil {
		return err
	}
	s.finMu.Lock()
	s.finished = append(s.finished, final...)
	s.finMu.Unlock()
	return s.Store.DeleteDue(ctx, drop...)
}

// flush deletes the entries of the deliveries that became final since the last flush. Entries it
// fails to delete are left to the poll, which deletes them once due.
func (s *Sender) flush(ctx context.Context) {
	s.finMu.Lock()
	ids := s.finished
	s.finished = nil
	s.finMu.Unlock()
	err := s.Store.DeleteDue(ctx, ids...)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		// Stopping: the flush on the way out tries them again.
		s.finMu.Lock()
		s.finished = append(s.finished, ids...)
		s.finMu.Unlock()
	default:
		s.Log.Warn("deleting schedule entries of final deliveries failed; the poll will", "entries", len(ids), "error", err)
	}
}

// healthNotes are the outcomes of a subscription's attempts recorded together, in order: whether
// each succeeded, and whether any was answered 410 Gone.
type healthNotes struct {
	sub  *store.Subscription
	h    *store.SubscriptionHealth
	ok   []bool
	gone bool
}

// noteHealth records attempts' outcomes in their endpoint's health when they change what is
// known: one read and one write, however many attempts. n.h, read when the attempts began, only
// decides whether to write: the write applies the outcomes to the health as it is now, so that
// an owner's enabling or disabling meanwhile is kept.
func (s *Sender) noteHealth(ctx context.Context, n *healthNotes, now time.Time) error {
	seen, changed := *n.h, n.gone
	for _, ok := range n.ok {
		var c bool
		seen, c = s.health(seen, ok, now)
		changed = changed || c
	}
	if !changed {
		return nil
	}
	cur, err := s.Store.Health(ctx, n.h.ID)
	if err != nil {
		return err
	}
	next := *cur
	for _, ok := range n.ok {
		next, _ = s.health(next, ok, now)
	}
	if n.gone && next.DisabledAt == nil {
		next.DisabledAt, next.DisabledReason = &now, "the endpoint answered 410 Gone"
	}
	next.ObjectID, next.Events = n.sub.ObjectID, nil
	ev, notify := events.Pending{}, false
	if cur.DisabledAt == nil && next.DisabledAt != nil {
		if ev, notify = s.disabledNotice(n.sub, &next); notify {
			// Staged before the health that records it is written (events.Outbox).
			if err := s.Notices.Stage(ctx, store.Health, next.ID, ev); err != nil {
				return err
			}
			next.Events = []string{ev.ID}
		}
	}
	*n.h = next
	if err := s.Store.PutHealth(ctx, &next); err != nil {
		return err
	}
	if notify {
		s.Notices.Confirm(ev)
	}
	return nil
}

// healthEvery bounds how stale last_success_at may be on a healthy endpoint: a success is written
// when the endpoint was failing or when the last one written is older, not on every delivery.
const healthEvery = time.Minute

// health updates what is known of the endpoint and says whether it changed enough to write; a
// subscription failing for DisableAfter is disabled.
func (s *Sender) health(h store.SubscriptionHealth, ok bool, now time.Time) (store.SubscriptionHealth, bool) {
	if ok {
		if h.FailingSince == nil && h.LastSuccessAt != nil && now.Sub(*h.LastSuccessAt) < healthEvery {
			return h, false
		}
		h.LastSuccessAt, h.FailingSince = &now, nil
		return h, true
	}
	h.LastFailureAt = &now
	if h.FailingSince == nil {
		h.FailingSince = &now
	}
	if h.DisabledAt == nil && now.Sub(*h.FailingSince) >= s.DisableAfter {
		h.DisabledAt, h.DisabledReason = &now, "the endpoint has been failing for "+s.DisableAfter.String()
	}
	return h, true
}

// Reasons a delivery fails unsent.
const (
	reasonDeleted  = "subscription deleted"
	reasonDisabled = "subscription disabled"
)

// Run attempts due deliveries until ctx ends: retries, replays, and first attempts left behind by
// a replica that stopped; it flushes the deletes of final deliveries' entries.
func (s *Sender) Run(ctx context.Context) error {
	defer func() {
		s.busy.Wait() // first attempts queued by the consumer stop with the service too
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		s.flush(fctx)
	}()
	t := time.NewTicker(s.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		s.flush(ctx)
		if err := s.poll(ctx); err != nil && ctx.Err() == nil {
			s.Log.Warn("polling due deliveries failed", "error", err)
		}
	}
}
