package webhook

import (
	"context"
	"sync"
	"time"

	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// Default bounds of the first-attempt lanes, for a Sender built without them.
const (
	DefaultLanes     = 64
	DefaultLaneDepth = 64
	DefaultLaneQueue = 1024
)

// lanes are the queues of first attempts of this process, one per subscription with work. Their
// memory is bounded: a place is reserved before the delivery is stored (reserve), so that a
// delivery without one is stored due at once and made by the schedule's poll instead.
type lanes struct {
	mu     sync.Mutex
	byID   map[string]*lane
	queued int // reserved or queued attempts in every lane
}

// lane is the queue of first attempts of one subscription, made one after the other so that a
// healthy endpoint receives a subscription's events in order.
type lane struct {
	id      string
	held    int // places reserved, queued or being attempted
	queue   []firstAttempt
	running bool // a goroutine drains the queue
}

// firstAttempt is a delivery this process inserted and attempts on its lane.
type firstAttempt struct {
	ctx      context.Context
	objectID string
	subID    string
	delivery *store.Delivery
}

// Reserve takes a place for one first attempt on a subscription's lane. It reports false when
// the lanes are full; the delivery is then stored due at once, for the schedule's poll. A place
// taken must be given back by Queue or Release.
func (s *Sender) Reserve(subID string) bool {
	l := &s.lanes
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byID == nil {
		l.byID = map[string]*lane{}
	}
	ln, ok := l.byID[subID]
	switch {
	case l.queued >= bound(s.LaneQueue, DefaultLaneQueue):
		return false
	case !ok && len(l.byID) >= bound(s.Lanes, DefaultLanes):
		return false
	case ok && ln.held >= bound(s.LaneDepth, DefaultLaneDepth):
		return false
	case !ok:
		ln = &lane{id: subID}
		l.byID[subID] = ln
	}
	ln.held++
	l.queued++
	return true
}

// Release gives back a place whose delivery was not inserted (it existed already).
func (s *Sender) Release(subID string) {
	l := &s.lanes
	l.mu.Lock()
	defer l.mu.Unlock()
	s.release(subID)
}

// release gives back a place; l.mu is held.
func (s *Sender) release(subID string) {
	l := &s.lanes
	ln := l.byID[subID]
	if ln == nil {
		return
	}
	ln.held--
	l.queued--
	if ln.held == 0 && !ln.running {
		delete(l.byID, subID)
	}
}

// Queue puts the first attempt of a delivery this replica has just inserted, on a place taken by
// Reserve, behind the subscription's earlier ones, and returns at once. It needs no claim: no
// other replica attempts a delivery before its first lease has passed, and the lane makes the
// attempt only while it can finish within that lease (see runFirst).
func (s *Sender) Queue(ctx context.Context, sub *store.Subscription, d *store.Delivery) {
	l := &s.lanes
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.byID[sub.ID]
	if ln == nil { // cannot happen after Reserve; the delivery is then left to its lease
		return
	}
	ln.queue = append(ln.queue, firstAttempt{ctx: ctx, objectID: sub.ObjectID, subID: sub.ID, delivery: d})
	if !ln.running {
		ln.running = true
		s.busy.Add(1)
		go s.drain(ln)
	}
}

// drain makes a lane's attempts until its queue is empty; each place is given back once its
// attempt is over.
func (s *Sender) drain(ln *lane) {
	defer s.busy.Done()
	l := &s.lanes
	for {
		l.mu.Lock()
		if len(ln.queue) == 0 {
			ln.running = false
			if ln.held == 0 {
				delete(l.byID, ln.id)
			}
			l.mu.Unlock()
			return
		}
		a := ln.queue[0]
		ln.queue[0] = firstAttempt{}
		ln.queue = ln.queue[1:]
		l.mu.Unlock()
		s.runFirst(a)
		l.mu.Lock()
		s.release(a.subID)
		l.mu.Unlock()
	}
}

func bound(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// startBy is the latest a lane may start a delivery's first attempt: the POST (at most Timeout)
// and the record of its outcome must both end before the lease does, after which the schedule's
// poll may make the attempt; half of what the lease leaves after the POST is kept for the record.
func (s *Sender) startBy(d *store.Delivery) (start, end time.Time) {
	end = *d.NextAttemptAt
	timeout := s.Timeout
	if timeout <= 0 || timeout >= s.Lease {
		timeout = s.Lease / 3
	}
	return end.Add(-timeout - (s.Lease-timeout)/2), end
}

// runFirst makes a queued first attempt, unless it is too late to finish within the delivery's
// lease (the schedule's poll makes it then, once) or the subscription was deleted or disabled
// since the delivery was stored (it fails at once, unsent). The subscription is read as it is
// now, so a changed callback, header or secret applies too. The POST's outcome is recorded beside
// the lane, so that the lane's next POST does not wait for the store: the order a subscription's
// events reach it is the order of the POSTs. The outcomes of every lane are recorded together in
// batches by one goroutine (recordFirsts); a lane waits when max(Workers, 100) outcomes are
// waiting for it.
func (s *Sender) runFirst(a firstAttempt) {
	ctx, d := a.ctx, a.delivery
	startBy, end := s.startBy(d)
	if ctx.Err() != nil || !clock.Now().Before(startBy) {
		return
	}
	sub, h, err := s.current(ctx, a.objectID, a.subID)
	if err != nil {
		s.Log.Warn("reading a subscription for its first attempt failed; its lease makes it", "delivery_id", d.ID, "error", err)
		return
	}
	// Every write for this attempt ends with the lease: after it, the delivery is the poll's.
	wctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), end)
	switch {
	case sub == nil:
		defer cancel()
		s.drop(wctx, attempt{d: d, unsent: reasonDeleted})
		return
	case store.Disabled(sub, h):
		defer cancel()
		s.drop(wctx, attempt{sub: sub, h: h, d: d, unsent: reasonDisabled})
		return
	}
	res := s.post(ctx, sub, d)
	if ctx.Err() != nil {
		cancel()
		return // the attempt's outcome is unknown: its lease makes it again
	}
	s.recordOnce.Do(func() { s.recording = make(chan struct{}, max(s.Workers, pollPage)) })
	select {
	case s.recording <- struct{}{}:
	case <-wctx.Done():
		cancel()
		s.Log.Warn("recording a first delivery attempt did not start within its lease; the poll makes it again", "delivery_id", d.ID)
		return
	}
	s.queueRecord(firstRecord{a: attempt{sub: sub, h: h, d: d, res: res}, ctx: wctx, cancel: cancel})
}

// firstRecord is the outcome of a lane's first attempt waiting to be recorded, with the context
// its writes must end in (the delivery's lease).
type firstRecord struct {
	a      attempt
	ctx    context.Context
	cancel context.CancelFunc
}

// queueRecord hands a first attempt's outcome to the goroutine that records them
// (recordFirsts), starting it when none runs.
func (s *Sender) queueRecord(r firstRecord) {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	s.recQueue = append(s.recQueue, r)
	if !s.recRunning {
		s.recRunning = true
		s.busy.Add(1)
		go s.recordFirsts()
	}
}

// recordFirsts records the queued outcomes of first attempts until none is left: those queued
// while a record is being written go together in the next one, so that a burst of first attempts
// costs a record's few commands per batch rather than per attempt.
func (s *Sender) recordFirsts() {
	defer s.busy.Done()
	for {
		s.recMu.Lock()
		batch := s.recQueue
		s.recQueue = nil
		if len(batch) == 0 {
			s.recRunning = false
			s.recMu.Unlock()
			return
		}
		s.recMu.Unlock()
		s.recordBatch(batch)
	}
}

// recordBatch records a batch of first attempts' outcomes. Its writes end with the earliest lease
// of the batch, after which the poll may make any of these attempts; an outcome whose lease has
// ended already is not recorded (the poll makes that attempt again).
func (s *Sender) recordBatch(batch []firstRecord) {
	var ctx context.Context
	var earliest time.Time
	as := make([]attempt, 0, len(batch))
	for _, r := range batch {
		defer func() { r.cancel(); <-s.recording }()
		if r.ctx.Err() != nil {
			s.Log.Warn("recording a first delivery attempt did not start within its lease; the poll makes it again", "delivery_id", r.a.d.ID)
			continue
		}
		if end, _ := r.ctx.Deadline(); ctx == nil || end.Before(earliest) {
			ctx, earliest = r.ctx, end
		}
		as = append(as, r.a)
	}
	if len(as) == 0 {
		return
	}
	if err := s.record(ctx, as); err != nil {
		s.Log.Warn("recording first delivery attempts failed; their leases make them again", "attempts", len(as), "error", err)
	}
}

// drop fails a first attempt that must not be sent.
func (s *Sender) drop(ctx context.Context, a attempt) {
	if err := s.record(ctx, []attempt{a}); err != nil {
		s.Log.Warn("failing the delivery of a gone subscription failed; its lease does", "delivery_id", a.d.ID, "error", err)
	}
}

// current returns a subscription and its health as they are now, or nil when it was deleted.
func (s *Sender) current(ctx context.Context, objectID, subID string) (*store.Subscription, *store.SubscriptionHealth, error) {
	subs, err := s.Subscribers.SubscriptionsTo(ctx, objectID)
	if err != nil {
		return nil, nil, err
	}
	for i := range subs {
		if subs[i].Sub.ID == subID {
			sub, h := subs[i].Sub, subs[i].Health
			return &sub, &h, nil
		}
	}
	return nil, nil, nil
}
