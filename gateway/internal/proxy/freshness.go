package proxy

import (
	"context"
	"fmt"
	"time"

	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/freshness"
)

// Freshness refuses the public writes that feed the event-fed projections while one of the
// consumer groups is more than Limit behind (its oldest unhandled event is older than Limit, as
// the consuming replicas report it through pkg/freshness): taking more of them would only grow
// the backlog, and the time every write takes to show in mailboxes, graphs, webhooks and
// streams. Reads and owners' controls are never held back, so an owner can still block a sender
// while the front door is closed to new writes.
type Freshness struct {
	Reader *freshness.Reader
	// Limit is the lag from which writes are refused (LAG_LIMIT); 0 refuses nothing.
	Limit time.Duration
}

// Admit answers nil, or 503 UNAVAILABLE with a Retry-After of the time the worst group needs to
// come back within the limit (at least a second).
func (f *Freshness) Admit(ctx context.Context) error {
	if f == nil || f.Limit <= 0 {
		return nil
	}
	worst := f.Reader.Worst(ctx, time.Now())
	if worst.Lag <= f.Limit {
		return nil
	}
	e := apierr.Unavailable(fmt.Errorf("consumer group %s is %v behind (limit %v)", worst.Group, worst.Lag, f.Limit))
	e.Message = "svc is catching up with earlier writes: retry after Retry-After seconds"
	e.RetryAfter = min(max((worst.Lag-f.Limit).Round(time.Second), time.Second), 30*time.Second)
	e.Shed = true
	return e
}
