// Package consumers holds what context-svc consumes: object.created (identity-svc), which
// materialises an object's profile as a backstop of the first read, and decision.recorded
// (graph-svc), which feeds the decision-memory rebuild.
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

// Topics are the topics context-svc consumes.
var Topics = []string{events.TopicIdentity, events.TopicGraph}

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
	case events.DecisionRecorded:
		var d contract.DecisionRecordedData
		if err := ev.Decode(&d); err != nil || d.NodeID == "" || ev.ObjectID == "" {
			return events.Permanent(fmt.Errorf("malformed %s event (%v)", ev.Type, err))
		}
		at, err := time.Parse(clock.Layout, d.CreatedAt)
		if err != nil {
			at = clock.Now()
		}
		return h.Store.RecordDecision(ctx, &store.Decision{
			ObjectID: ev.ObjectID, ThreadID: d.ThreadID, NodeID: d.NodeID, Title: d.Title, Body: d.Body,
			Confidence: d.Confidence, Supersedes: d.Supersedes, CreatedAt: at,
		})
	}
	return nil
}
