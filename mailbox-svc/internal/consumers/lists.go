package consumers

import (
	"context"
	"fmt"
	"slices"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// Lists projects mailbox-svc's own message.created events into the lists that thread and mailbox
// reads page through: the message (and any earlier one of its thread not logged yet) goes into its
// thread's list, and the thread to the front of both participants' mailboxes. The send writes
// none of this, so that it stays three store commands.
type Lists struct {
	Store interface {
		LogThreadUpTo(ctx context.Context, threadID, messageID string) error
		ProjectMessage(ctx context.Context, threadID string) error
	}
}

// Handle implements events.BatchHandler for the events of one partition, in order. It is
// idempotent by its writes: a message is logged once (keyed by its id), and a thread already at
// the front of a mailbox is not moved again. Each message is logged in turn; each thread of the
// batch then moves to the front once, the one with the batch's latest message last, so a burst
// into one thread costs one move.
func (l *Lists) Handle(ctx context.Context, evs []events.Event) error {
	var threads []string
	for _, ev := range evs {
		if ev.Type != events.MessageCreated {
			continue
		}
		var d contract.MessageCreatedData
		if err := ev.Decode(&d); err != nil || d.ThreadID == "" || d.MessageID == "" {
			return events.Permanent(fmt.Errorf("malformed %s event (%v)", ev.Type, err))
		}
		if err := l.Store.LogThreadUpTo(ctx, d.ThreadID, d.MessageID); err != nil {
			return err
		}
		threads = append(slices.DeleteFunc(threads, func(t string) bool { return t == d.ThreadID }), d.ThreadID)
	}
	for _, t := range threads {
		if err := l.Store.ProjectMessage(ctx, t); err != nil {
			return err
		}
	}
	return nil
}
