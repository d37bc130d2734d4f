package store

import (
	"context"
	"errors"
	"fmt"
	"time"

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

// AttemptList names a subscription's list of attempts: every attempt (outcome ""), or the
// attempts that ended a delivery with one final outcome. A count per outcome over a window is the
// difference of two positions in its list, so counts are kept by the writes, never counted.
func AttemptList(subID, outcome string) string {
	if outcome == "" {
		return "attempts:" + subID
	}
	return "attempts:" + subID + ":" + outcome
}

// LogAttempt appends an attempt to its subscription's log and, when it ends the delivery, to the
// list of its outcome, once per delivery (a rewrite of the same outcome appends nothing).
func (s *Store) LogAttempt(ctx context.Context, subID string, e AttemptEntry) error {
	if _, err := mongox.Append(ctx, s.log, AttemptList(subID, ""), e); err != nil {
		return fmt.Errorf("log attempt: %w", err)
	}
	if e.Outcome == OutcomeRetrying {
		return nil
	}
	if _, _, err := mongox.AppendOnce(ctx, s.log, AttemptList(subID, e.Outcome), e.DeliveryID, e); err != nil {
		return fmt.Errorf("log %s delivery: %w", e.Outcome, err)
	}
	return nil
}

// Attempts reads a page of a list, newest first, below position before (0: the newest).
func (s *Store) Attempts(ctx context.Context, list string, before int64, limit int) ([]mongox.Entry[AttemptEntry], int64, error) {
	return mongox.Page[AttemptEntry](ctx, s.log, list, before, limit)
}

// AttemptsLen is how many entries list ever had.
func (s *Store) AttemptsLen(ctx context.Context, list string) (int64, error) {
	return s.log.Len(ctx, list)
}

// AttemptsBefore is how many entries of list were appended before t: the position of the last of
// them. Entries are appended in time order, so it is found by bisection, in about log2(length)
// point reads.
func (s *Store) AttemptsBefore(ctx context.Context, list string, t time.Time) (int64, error) {
	n, err := s.log.Len(ctx, list)
	if err != nil {
		return 0, err
	}
	lo, hi := int64(0), n // entries 1..lo are before t; entries after hi are not
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		e, err := mongox.Get[AttemptEntry](ctx, s.log, list, mid)
		switch {
		case errors.Is(err, mongox.ErrNotFound): // an append in progress: treat as not before
			hi = mid - 1
			continue
		case err != nil:
			return 0, fmt.Errorf("read %s entry %d: %w", list, mid, err)
		}
		if e.At.Before(t) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo, nil
}
