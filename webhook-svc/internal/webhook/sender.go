package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// Sender makes delivery attempts. Every attempt is claimed first by inserting the id
// <delivery>/<attempt>/<slot>: the first insert wins, so two replicas never make the same
// attempt. The slot is 0 for the attempt made as the event is consumed, and after that counts
// leases since the attempt came due, so that when the replica holding a claim dies, another one
// claims the next slot once the lease has passed and the delivery is not lost.
type Sender struct {
	Store Repository
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

	mu    sync.Mutex
	lanes map[string]*lane
	busy  sync.WaitGroup
}

// lane is the queue of first attempts of one subscription, made one after the other so that a
// healthy endpoint receives a subscription's events in order.
type lane struct{ queue []func() }

// Attempt makes the next attempt of d when this replica wins its claim for slot. A context
// ending mid-attempt leaves the delivery as it was: its claim lapses and another replica retries.
func (s *Sender) Attempt(ctx context.Context, d *store.Delivery, slot int) error {
	n := len(d.Attempts) + 1
	won, err := s.Store.Claim(ctx, fmt.Sprintf("%s/%d/%d", d.ID, n, slot), clock.Now().Add(s.Lease))
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
		return s.finish(ctx, cur, store.StatusFailed, "subscription deleted")
	}
	if err != nil {
		return err
	}
	h, err := s.Store.Health(ctx, sub.ID)
	if err != nil {
		return err
	}
	if h.DisabledAt != nil {
		return s.finish(ctx, cur, store.StatusFailed, "subscription disabled")
	}
	return s.deliver(ctx, sub, h, cur)
}

// First queues the first attempt of a delivery this replica has just inserted, behind the
// subscription's earlier ones, and returns at once. It needs no claim: no other replica attempts
// a delivery before its first lease has passed. An attempt that fails to complete is left to
// that lease.
func (s *Sender) First(ctx context.Context, sub *store.Subscription, h *store.SubscriptionHealth, d *store.Delivery) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lanes == nil {
		s.lanes = map[string]*lane{}
	}
	l, ok := s.lanes[sub.ID]
	if !ok {
		l = &lane{}
		s.lanes[sub.ID] = l
		s.busy.Add(1)
		go s.drain(sub.ID, l)
	}
	l.queue = append(l.queue, func() {
		if err := s.deliver(ctx, sub, h, d); err != nil && ctx.Err() == nil {
			s.Log.Warn("first delivery attempt failed", "delivery_id", d.ID, "error", err)
		}
	})
}

// drain runs a lane's attempts until it is empty.
func (s *Sender) drain(key string, l *lane) {
	defer s.busy.Done()
	for {
		s.mu.Lock()
		if len(l.queue) == 0 {
			delete(s.lanes, key)
			s.mu.Unlock()
			return
		}
		job := l.queue[0]
		l.queue = l.queue[1:]
		s.mu.Unlock()
		job()
	}
}

func (s *Sender) deliver(ctx context.Context, sub *store.Subscription, h *store.SubscriptionHealth, d *store.Delivery) error {
	res := s.post(ctx, sub, d)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return s.record(ctx, sub, d, h, res)
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

// record applies an attempt's outcome: 2xx succeeds; 410 fails and disables the subscription;
// 401 is retried once; network errors, 429 and 5xx follow the retry schedule; anything else
// fails.
func (s *Sender) record(ctx context.Context, sub *store.Subscription, d *store.Delivery, h *store.SubscriptionHealth, res result) error {
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
	if d.Status == store.StatusPending {
		if delay, ok := s.Retry.NextDuration(len(d.Attempts)-1, res.retryAfter); retry && ok {
			next := now.Add(delay)
			d.NextAttemptAt = &next
		} else {
			d.Status, d.NextAttemptAt = store.StatusFailed, nil
		}
	}
	ctx = context.WithoutCancel(ctx) // the attempt was made: its outcome is kept
	// Health first, so that whoever sees the delivery's outcome also sees its effect on the endpoint.
	if err := s.noteHealth(ctx, sub, h, d.Status == store.StatusSucceeded, code == http.StatusGone, now); err != nil {
		return err
	}
	return s.Store.ReplaceDelivery(ctx, d)
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
	next.ObjectID = sub.ObjectID
	*h = next
	return s.Store.PutHealth(ctx, &next)
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
	d.Status, d.NextAttemptAt = status, nil
	d.Attempts = append(d.Attempts, store.Attempt{At: clock.Now(), Error: reason})
	return s.Store.ReplaceDelivery(ctx, d)
}

// Run attempts due deliveries until ctx ends: retries, replays, and first attempts left behind by
// a replica that stopped.
func (s *Sender) Run(ctx context.Context) error {
	t := time.NewTicker(s.PollInterval)
	defer t.Stop()
	defer s.busy.Wait() // first attempts queued by the consumer stop with the service too
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		due, err := s.Store.DueDeliveries(ctx, clock.Now(), 100)
		if err != nil {
			if ctx.Err() == nil {
				s.Log.Warn("listing due deliveries failed", "error", err)
			}
			continue
		}
		s.attemptAll(ctx, due)
	}
}

// attemptAll attempts deliveries in parallel (at most Workers at once) and waits for them, so
// that a replica never races its own attempts.
func (s *Sender) attemptAll(ctx context.Context, due []store.Delivery) {
	sem := make(chan struct{}, max(1, s.Workers))
	var wg sync.WaitGroup
	now := clock.Now()
	for i := range due {
		d := &due[i]
		slot := 1 + int(now.Sub(*d.NextAttemptAt)/s.Lease)
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := s.Attempt(ctx, d, slot); err != nil && ctx.Err() == nil {
				s.Log.Warn("delivery attempt failed", "delivery_id", d.ID, "error", err)
			}
		}()
	}
	wg.Wait()
}
