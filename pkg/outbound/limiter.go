package outbound

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/config"
)

// Limiter bounds the memory-holding outbound work of a process (a fetch and the parse of what
// it read: ingest, source pulls, claims, sync): at most Max run at once and at most Queue
// callers wait for a turn, each at most Wait. A caller past the queue, or one whose wait ran
// out, is refused at once with a *BusyError, which services answer 503 with Retry-After: the
// work a process holds stays bounded whatever its callers send.
type Limiter struct {
	slots   chan struct{}
	waiting atomic.Int64
	queue   int64
	wait    time.Duration
}

// LimiterOptions configure a Limiter.
type LimiterOptions struct {
	Max, Queue int
	Wait       time.Duration
}

// LimiterFromConfig reads the limiter's options from the outbound configuration.
func LimiterFromConfig(c config.Outbound) LimiterOptions {
	return LimiterOptions{Max: c.MaxConcurrent, Queue: c.MaxQueued, Wait: c.QueueWait}
}

// NewLimiter builds a limiter; Max must be positive.
func NewLimiter(o LimiterOptions) (*Limiter, error) {
	if o.Max <= 0 || o.Queue < 0 || o.Wait < 0 {
		return nil, errors.New("configuration: OUTBOUND_MAX_CONCURRENT must be positive, OUTBOUND_MAX_QUEUED and OUTBOUND_QUEUE_WAIT not negative")
	}
	return &Limiter{slots: make(chan struct{}, o.Max), queue: int64(o.Queue), wait: o.Wait}, nil
}

// BusyError says that the process runs as much outbound work as it may: retry after RetryAfter.
type BusyError struct{ RetryAfter time.Duration }

func (e *BusyError) Error() string {
	return fmt.Sprintf("outbound: too much work in progress, retry after %s", e.RetryAfter)
}

// ErrBusy matches every *BusyError with errors.Is.
var ErrBusy = errors.New("outbound: too much work in progress")

// Is makes errors.Is(err, ErrBusy) true.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// Acquire takes a turn, waiting in the queue when every turn is taken and the queue has room.
// The returned release gives the turn back; call it once the work and what it holds are done.
func (l *Limiter) Acquire(ctx context.Context) (release func(), err error) {
	select {
	case l.slots <- struct{}{}:
		return l.release, nil
	default:
	}
	if l.waiting.Add(1) > l.queue {
		l.waiting.Add(-1)
		return nil, l.busy()
	}
	defer l.waiting.Add(-1)
	t := time.NewTimer(l.wait)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return l.release, nil
	case <-t.C:
		return nil, l.busy()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Wait takes a turn however long that takes (for background work such as a scheduled pull,
// which has no caller to refuse), until ctx ends.
func (l *Limiter) Wait(ctx context.Context) (release func(), err error) {
	select {
	case l.slots <- struct{}{}:
		return l.release, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *Limiter) release() { <-l.slots }

// busy is the refusal, asking to come back after about one queue wait.
func (l *Limiter) busy() *BusyError { return &BusyError{RetryAfter: max(l.wait, time.Second)} }

// Turn takes a turn for a caller who is waiting for an answer: past the queue bound it is
// refused with a 503 UNAVAILABLE carrying Retry-After, saying that the service does what (a
// phrase such as "fetching pages") as much as it may at once.
func (l *Limiter) Turn(ctx context.Context, what string) (release func(), err error) {
	release, err = l.Acquire(ctx)
	var busy *BusyError
	if errors.As(err, &busy) {
		e := apierr.Errorf(http.StatusServiceUnavailable, apierr.CodeUnavailable,
			"this service is %s as much as it may at once: retry later", what)
		e.RetryAfter = busy.RetryAfter
		return nil, e
	}
	return release, err
}
