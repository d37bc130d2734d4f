package graph

import (
	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// This file builds every event graph-svc publishes (topic svc.graph.v1). Each event is staged in
// the outbox under the document whose insert records its id (_events), and confirmed once that
// insert succeeded. Private guidance never appears in any of them.

// decisionEvents report decision n to each participant of its thread: context-svc adds it to
// the participant's decision memory, and it is the participant's public decision webhook event.
func decisionEvents(requestID string, n *store.Node, parts []contract.Participant) []events.Pending {
	out := make([]events.Pending, 0, len(parts))
	for _, p := range parts {
		out = append(out, events.MustNew(events.TopicGraph, events.DecisionRecorded, p.ObjectID, p.Hash, requestID,
			contract.DecisionRecordedData{ThreadID: n.ThreadID, NodeID: n.ID, Title: n.Title, Body: n.Body,
				Confidence: n.Confidence, CreatedAt: clock.Format(n.CreatedAt)}))
	}
	return out
}
