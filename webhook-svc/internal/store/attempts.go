package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
)

// Attempt outcomes, as the delivery log shows and filters them.
const (
	OutcomeSucceeded = "succeeded" // 2xx: the delivery is done
	OutcomeRetrying  = "retrying"  // failed, another attempt is scheduled
	OutcomeFailed    = "failed"    // failed for good (given up, 410, refused, subscription disabled)
)

// AttemptEntry is one attempt in a subscription's delivery log.
type AttemptEntry struct {
	DeliveryID string    `bson:"delivery_id"`
	EventID    string    `bson:"event_id"`
	Event      string    `bson:"event"`
	Attempt    int       `bson:"attempt"`
	Outcome    string    `bson:"outcome"`
	StatusCode int       `bson:"status_code,omitempty"`
	Error      string    `bson:"error,omitempty"`
	DurationMS int64     `bson:"duration_ms"`
	At         time.Time `bson:"at"`
}

// LoggedAttempt is an attempt as its log keeps it: Key is its place in the log, a page's cursor.
type LoggedAttempt struct {
	Key          string `bson:"_id"`
	AttemptEntry `bson:",inline"`
}

// A subscription's delivery log is three lists in the Attempts collection, each keyed
// "<subscription>|<list>|<attempt time>|<delivery>|<attempt number>": every attempt ("all"), and
// the attempts that ended a delivery, by outcome. A page is one range read, newest first; a time
// window is a range of the key; an entry is inserted once, whoever logs it again.
const allAttempts = "all"

// AttemptScope is the scope of one list of a subscription's log, which a page's cursor is bound
// to: every attempt (outcome "") or those that ended a delivery with outcome.
func AttemptScope(subID, outcome string) string {
	if outcome == "" {
		outcome = allAttempts
	}
	return mongox.Scope(mongox.IDPart(subID), outcome)
}

func attemptKey(scope string, e AttemptEntry) string {
	return scope + mongox.Key(mongox.Time(e.At.UTC().Truncate(time.Millisecond)), mongox.IDPart(e.DeliveryID), mongox.Seq(int64(e.Attempt)))
}

// LogLine is an attempt on its way to its subscription's log.
type LogLine struct {
	SubscriptionID string
	AttemptEntry
}

// LogAttempts inserts attempts into their subscriptions' logs and, for those that end their
// delivery, into the list of their outcome: one command, whatever the number of attempts.
func (s *Store) LogAttempts(ctx context.Context, lines ...LogLine) error {
	docs := make([]LoggedAttempt, 0, 2*len(lines))
	for _, l := range lines {
		e := l.AttemptEntry
		docs = append(docs, LoggedAttempt{Key: attemptKey(AttemptScope(l.SubscriptionID, ""), e), AttemptEntry: e})
		if e.Outcome != OutcomeRetrying {
			docs = append(docs, LoggedAttempt{Key: attemptKey(AttemptScope(l.SubscriptionID, e.Outcome), e), AttemptEntry: e})
		}
	}
	if _, err := mongox.InsertNew(ctx, s.c(Attempts), docs); err != nil {
		return fmt.Errorf("log attempt: %w", err)
	}
	return nil
}

// AttemptRange is the part of one list of a subscription's log logged in [Since, Until) (zero:
// unbounded), below the key Before when it is set.
type AttemptRange struct {
	SubscriptionID, Outcome string
	Since, Until            time.Time
	Before                  string
}

func (q AttemptRange) keys() mongox.Range {
	scope := AttemptScope(q.SubscriptionID, q.Outcome)
	r := mongox.Range{Scope: scope, Before: q.Before}
	if !q.Since.IsZero() {
		// Every key of an attempt at or after Since sorts after this prefix of one.
		r.After = scope + mongox.Time(q.Since.UTC().Truncate(time.Millisecond))
	}
	if !q.Until.IsZero() {
		until := scope + mongox.Time(q.Until.UTC().Truncate(time.Millisecond))
		if r.Before == "" || until < r.Before {
			r.Before = until
		}
	}
	return r
}

// Attempts reads up to limit attempts of q, newest first, or oldest first with asc: one range read.
func (s *Store) Attempts(ctx context.Context, q AttemptRange, limit int, asc bool) ([]LoggedAttempt, error) {
	r := q.keys()
	r.Desc, r.Limit = !asc, limit
	out, err := mongox.Find[LoggedAttempt](ctx, s.c(Attempts), r)
	if err != nil {
		return nil, fmt.Errorf("read delivery log: %w", err)
	}
	return out, nil
}

// countBatch is how many keys one read of a count carries.
const countBatch = 1000

// CountAttempts counts the attempts of q: the keys of its range, read in pages of countBatch,
// so that a window costs one read per thousand attempts in it, whatever the log holds.
func (s *Store) CountAttempts(ctx context.Context, q AttemptRange) (int64, error) {
	r := q.keys()
	r.Limit = countBatch
	var n int64
	for {
		keys, err := mongox.FindAll[struct {
			Key string `bson:"_id"`
		}](ctx, s.c(Attempts), r.Filter(), r.Options().SetProjection(bson.D{{Key: "_id", Value: 1}}))
		if err != nil {
			return 0, fmt.Errorf("count delivery log: %w", err)
		}
		n += int64(len(keys))
		if len(keys) < countBatch {
			return n, nil
		}
		r.After = keys[len(keys)-1].Key
	}
}
