// Package consumers holds what context-svc consumes: object.created (identity-svc), which
// materialises an object's profile as a backstop of the first read, decision.recorded
// (graph-svc), which feeds the decision-memory rebuild, and sender.blocked and unblocked
// (mailbox-svc) with object.hash_changed (identity-svc), which keep the owner's blocked list.
package consumers

import (
	"context"
	"fmt"
	"time"

	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// Group is the consumer group of context-svc's projections.
const Group = "projections"

// Topics are the topics context-svc consumes.
var Topics = []string{events.TopicIdentity, events.TopicGraph, events.TopicMailbox}

// Projections handles the consumed events.
type Projections struct {
	Store *store.Store
}

// Handle implements events.Handler; it is idempotent.
func (h *Projections) Handle(ctx context.Context, ev events.Event) error {
	switch ev.Type {
	case events.ObjectCreated:
		var d contract.ObjectCreatedData
		if err := ev.Decode(&d); err != nil || d.ObjectID == "" {
			return events.Permanent(fmt.Errorf("malformed %s event (%v)", ev.Type, err)) // retrying cannot help
		}
		_, err := h.Store.Materialise(ctx, d.Object)
		return err
	case events.SenderBlocked, events.SenderUnblocked:
		var d contract.SenderBlockData
		if err := ev.Decode(&d); err != nil || d.SenderObjectID == "" || ev.ObjectID == "" {
			return events.Permanent(fmt.Errorf("malformed %s event (%v)", ev.Type, err))
		}
		if ev.Type == events.SenderUnblocked {
			return h.Store.RecordUnblock(ctx, ev.ObjectID, d.SenderObjectID)
		}
		at, err := time.Parse(clock.Layout, d.At)
		if err != nil {
			at = clock.Now()
		}
		return h.Store.RecordBlock(ctx, ev.ObjectID, store.BlockedSender{ObjectID: d.SenderObjectID, Hash: d.SenderHash, BlockedAt: at})
	case events.ObjectHashChanged:
		var d contract.HashChangedData
		if err := ev.Decode(&d); err != nil || d.Hash == "" || ev.ObjectID == "" {
			return events.Permanent(fmt.Errorf("malformed %s event (%v)", ev.Type, err))
		}
		return h.Store.SetSenderName(ctx, ev.ObjectID, d.Hash)
	case events.DecisionRecorded:
		var d contract.DecisionRecordedData
		if err := ev.Decode(&d); err != nil || d.NodeID == "" || ev.ObjectID == "" {
			return events.Permanent(fmt.Errorf("malformed %s event (%v)", ev.Type, err))
		}
		if d.Accepted != nil && !*d.Accepted {
			// The other side's decision in a thread the object never wrote into: it is not the
			// object's to remember, and must not crowd its own decisions out of a rebuild.
			return nil
		}
		at, err := time.Parse(clock.Layout, d.CreatedAt)
		if err != nil {
			at = clock.Now()
		}
		return h.Store.RecordDecision(ctx, &store.Decision{
			ObjectID: ev.ObjectID, ThreadID: d.ThreadID, NodeID: d.NodeID, Title: d.Title, Body: d.Body,
			Confidence: d.Confidence, Supersedes: d.Supersedes, CreatedAt: at,
			ValidFrom: parseOptional(d.ValidFrom), ValidUntil: parseOptional(d.ValidUntil), AuthorHash: d.AuthorHash,
		})
	}
	return nil
}

// parseOptional reads an optional timestamp of an event (nil when absent or not one).
func parseOptional(s *string) *time.Time {
	if s == nil {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return nil
	}
	t = t.UTC()
	return &t
}
