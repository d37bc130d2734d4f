package webhook

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// SendStore is what the sender reads and writes: the schedule, the deliveries and their attempts,
// and the subscriptions and their health.
type SendStore interface {
	Subscription(ctx context.Context, id string) (*store.Subscription, error)
	Health(ctx context.Context, id string) (*store.SubscriptionHealth, error)
	PutHealth(ctx context.Context, h *store.SubscriptionHealth) error
	Delivery(ctx context.Context, id string) (*store.Delivery, error)
	ReplaceDelivery(ctx context.Context, d *store.Delivery) error
	DueEntries(ctx context.Context, now time.Time, limit int) ([]store.DueEntry, error)
	InsertDue(ctx context.Context, entries ...store.DueEntry) error
	MoveDue(ctx context.Context, from store.DueEntry, to time.Time) error
	DeleteDue(ctx context.Context, entries ...store.DueEntry) error
	Claim(ctx context.Context, key string) (bool, error)
	LogAttempt(ctx context.Context, subID string, e store.AttemptEntry) error
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
// of a final delivery, which the poll deletes.
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
	// recording bounds the outcomes of first attempts being written at once.
	recordOnce sync.Once
	recording  chan struct{}

	// finished are the entries of the deliveries that became final since the last flush; they
	// are deleted together, one command per poll rather than one per delivery.
	finMu    sync.Mutex
	finished []store.DueEntry
}

// Attempt makes the next attempt of d when this replica wins its claim for slot. A context
// ending mid-attempt leaves the delivery as it was: its claim lapses and another replica retries.
func (s *Sender) Attempt(ctx context.Context, d *store.Delivery, slot int) error {
	n := len(d.Attempts) + 1
	var next time.Time
	if d.NextAttemptAt != nil {
		next = *d.NextAttemptAt
	}
	won, err := s.Store.Claim(ctx, store.ClaimKey(d.ID, n, slot, next.Add(time.Duration(slot)*s.Lease)))
	if err != nil || !won {
		return err
	}
	cur, err := s.Store.Delivery(ctx, d.ID)
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	if cur.Status != store.StatusPending || len(cur.Attempts)+1 != n {
		return nil // attempt n was made meanwhile by the claim's previous holder
	}
	sub, err := s.Store.Subscription(ctx, cur.SubscriptionID)
	if errors.Is(err, mongox.ErrNotFound) {
		return s.finish(ctx, cur, store.StatusFailed, reasonDeleted)
	}
	if err != nil {
		return err
	}
	h, err := s.Store.Health(ctx, sub.ID)
	if err != nil {
		return err
	}
	if store.Disabled(sub, h) {
		return s.finish(ctx, cur, store.StatusFailed, reasonDisabled)
	}
	return s.deliver(ctx, sub, h, cur)
}

func (s *Sender) deliver(ctx context.Context, sub *store.Subscription, h *store.SubscriptionHealth, d *store.Delivery) error {
	res := s.post(ctx, sub, d)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return s.record(context.WithoutCancel(ctx), sub, d, h, res) // the attempt was made: its outcome is kept
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

// record applies an attempt's outcome (ctx is the caller's budget for the writes): 2xx succeeds; 410 fails and disables the subscription;
// 401 is retried once; network errors, 429 and 5xx follow the retry schedule; anything else
// fails.
func (s *Sender) record(ctx context.Context, sub *store.Subscription, d *store.Delivery, h *store.SubscriptionHealth, res result) error {
	prev := d.NextAttemptAt
	d.Attempts = append(d.Attempts, res.attempt)
	code := res.attempt.StatusCode
	now := clock.Now()
	retry := false
	switch {
	case res.err == nil && code >= 200 && code < 300:
		d.Status, d.NextAttemptAt = store.StatusSucceeded, nil
	case code == http.StatusGone:
		d.Status, d.NextAttemptAt = store.StatusFailed, nil
	case code == http.StatusUnauthorized:
		retry = unauthorizedCount(d.Attempts) == 1
	case res.err != nil, code == http.StatusTooManyRequests, code >= 500:
		retry = true
	default:
		d.Status, d.NextAttemptAt = store.StatusFailed, nil
	}
	givenUp := false
	if d.Status == store.StatusPending {
		if delay, ok := s.Retry.NextDuration(len(d.Attempts)-1, res.retryAfter); retry && ok {
			next := now.Add(delay)
			d.NextAttemptAt = &next
		} else {
			d.Status, d.NextAttemptAt, givenUp = store.StatusFailed, nil, retry
		}
	}
	// Health first, so that whoever sees the delivery's outcome also sees its effect on the endpoint.
	if err := s.noteHealth(ctx, sub, h, d.Status == store.StatusSucceeded, code == http.StatusGone, now); err != nil {
		return err
	}
	var staged []events.Pending
	if ev, ok := s.givenUpNotice(sub, d, now); givenUp && ok {
		// Staged before the delivery that records it is written (events.Outbox).
		if err := s.Notices.Stage(ctx, store.Deliveries, d.ID, ev); err != nil {
			return err
		}
		d.Events, staged = []string{ev.ID}, append(staged, ev)
	}
	if err := s.write(ctx, d, prev); err != nil {
		return err
	}
	if len(staged) > 0 {
		s.Notices.Confirm(staged...)
	}
	s.logAttempt(ctx, d)
	return nil
}

// logAttempt appends a delivery's latest attempt to its subscription's delivery log, after the
// delivery (the truth) is written: a failure here loses a log line, never a delivery.
func (s *Sender) logAttempt(ctx context.Context, d *store.Delivery) {
	a := d.Attempts[len(d.Attempts)-1]
	outcome := store.OutcomeRetrying
	switch d.Status {
	case store.StatusSucceeded:
		outcome = store.OutcomeSucceeded
	case store.StatusFailed:
		outcome = store.OutcomeFailed
	}
	e := store.AttemptEntry{DeliveryID: d.ID, EventID: d.EventID, Event: d.Event, Attempt: len(d.Attempts), Outcome: outcome,
		StatusCode: a.StatusCode, Error: a.Error, DurationMS: a.DurationMS, At: a.At}
	if err := s.Store.LogAttempt(ctx, d.SubscriptionID, e); err != nil {
		s.Log.Warn("logging a delivery attempt failed", "delivery_id", d.ID, "error", err)
	}
}

// write stores a delivery's outcome and its place in the schedule, in the order that keeps an
// entry no later than the stored next attempt at every step: the entry at the new next attempt
// is inserted before the delivery is written, and the one at prev (the next attempt stored so
// far, where its entry is) deleted after; the entry of a final delivery goes with the next flush.
func (s *Sender) write(ctx context.Context, d *store.Delivery, prev *time.Time) error {
	if d.Status != store.StatusPending || d.NextAttemptAt == nil {
		if err := s.Store.ReplaceDelivery(ctx, d); err != nil {
			return err
		}
		if prev != nil {
			s.finMu.Lock()
			s.finished = append(s.finished, store.Due(d.ID, *prev))
			s.finMu.Unlock()
		}
		return nil
	}
	next := store.Due(d.ID, *d.NextAttemptAt)
	if prev != nil && store.Due(d.ID, *prev).Key == next.Key {
		return s.Store.ReplaceDelivery(ctx, d)
	}
	if err := s.Store.InsertDue(ctx, next); err != nil {
		return err
	}
	if err := s.Store.ReplaceDelivery(ctx, d); err != nil {
		return err
	}
	if prev == nil {
		return nil
	}
	return s.Store.DeleteDue(ctx, store.Due(d.ID, *prev))
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

// noteHealth records an attempt's outcome in the endpoint's health when it changes what is known.
// h, read when the attempt began, only decides whether to write: the write applies the outcome
// to the health as it is now, so that an owner's enabling or disabling meanwhile is kept.
func (s *Sender) noteHealth(ctx context.Context, sub *store.Subscription, h *store.SubscriptionHealth, ok, gone bool, now time.Time) error {
	if _, changed := s.health(*h, ok, now); !changed && !gone {
		return nil
	}
	cur, err := s.Store.Health(ctx, h.ID)
	if err != nil {
		return err
	}
	next, _ := s.health(*cur, ok, now)
	if gone && next.DisabledAt == nil {
		next.DisabledAt, next.DisabledReason = &now, "the endpoint answered 410 Gone"
	}
	next.ObjectID, next.Events = sub.ObjectID, nil
	ev, notify := events.Pending{}, false
	if cur.DisabledAt == nil && next.DisabledAt != nil {
		if ev, notify = s.disabledNotice(sub, &next); notify {
			// Staged before the health that records it is written (events.Outbox).
			if err := s.Notices.Stage(ctx, store.Health, next.ID, ev); err != nil {
				return err
			}
			next.Events = []string{ev.ID}
		}
	}
	*h = next
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

func unauthorizedCount(as []store.Attempt) int {
	n := 0
	for _, a := range as {
		if a.StatusCode == http.StatusUnauthorized {
			n++
		}
	}
	return n
}

// finish ends a delivery that can no longer be attempted.
func (s *Sender) finish(ctx context.Context, d *store.Delivery, status, reason string) error {
	prev := d.NextAttemptAt
	d.Status, d.NextAttemptAt = status, nil
	d.Attempts = append(d.Attempts, store.Attempt{At: clock.Now(), Error: reason})
	if err := s.write(ctx, d, prev); err != nil {
		return err
	}
	if reason != reasonDeleted { // a deleted subscription's log is read by no one
		s.logAttempt(ctx, d)
	}
	return nil
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

// poll looks at up to 100 due entries, Workers at once, and waits for them, so that a replica
// never races its own attempts. The entries of deliveries that are final or gone are deleted
// together afterwards.
func (s *Sender) poll(ctx context.Context) error {
	now := clock.Now()
	due, err := s.Store.DueEntries(ctx, now, 100)
	if err != nil {
		return err
	}
	sem := make(chan struct{}, max(1, s.Workers))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var done []store.DueEntry
	for _, e := range due {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			final, err := s.look(ctx, e, now)
			if err != nil && ctx.Err() == nil {
				s.Log.Warn("delivery attempt failed", "delivery_id", e.ID, "error", err)
			}
			if final {
				mu.Lock()
				done = append(done, e)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return s.Store.DeleteDue(ctx, done...)
}

// look reads the delivery of a due entry, the truth of its schedule: it attempts the delivery
// when its next attempt has come, and otherwise moves the entry to it. It reports true when the
// delivery is final, or does not exist a lease after the entry came due (its writer stopped
// between inserting the entry and the delivery), so that the entry is deleted. Before that, a
// missing delivery may still be on its way: a replay's entry is due at once, and its delivery is
// inserted just after it.
func (s *Sender) look(ctx context.Context, e store.DueEntry, now time.Time) (final bool, err error) {
	d, err := s.Store.Delivery(ctx, e.ID)
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		return now.Sub(e.DueAt) >= s.Lease, nil
	case err != nil:
		return false, err
	case d.Status != store.StatusPending || d.NextAttemptAt == nil:
		return true, nil
	case d.NextAttemptAt.After(now):
		return false, s.Store.MoveDue(ctx, e, *d.NextAttemptAt)
	}
	return false, s.Attempt(ctx, d, 1+int(now.Sub(*d.NextAttemptAt)/s.Lease))
}
