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

// decisionEvents report decision n to each participant of its thread: it is the participant's
// public decision webhook event, and context-svc adds it to the participant's decision memory
// when accepted says it belongs there (see Service.accepted), naming its author.
func decisionEvents(requestID string, n *store.Node, parts []contract.Participant, accepted map[string]bool) []events.Pending {
	out := make([]events.Pending, 0, len(parts))
	for _, p := range parts {
		ok := accepted[p.ObjectID]
		out = append(out, events.MustNew(events.TopicGraph, events.DecisionRecorded, p.ObjectID, p.Hash, requestID,
			contract.DecisionRecordedData{ThreadID: n.ThreadID, NodeID: n.ID, Title: n.Title, Body: n.Body,
				Confidence: n.Confidence, Supersedes: n.Supersedes, CreatedAt: clock.Format(n.CreatedAt),
				ValidFrom: clock.FormatPtr(n.ValidFrom), ValidUntil: clock.FormatPtr(n.ValidUntil),
				AuthorHash: n.AuthorHash, Accepted: &ok}))
	}
	return out
}

// sourceEvent reports that a source's text was read for the first time (added) or changed:
// the owner's public context_source webhook event. It names the source, never its text. Its id
// derives from key, the change, so that pulls racing to record one change record one event.
func sourceEvent(key, requestID string, src *store.Source, p *store.Pull, added bool) events.Pending {
	change := "changed"
	if added {
		change = "added"
	}
	return events.MustNewOnce(key, events.TopicGraph, events.ContextSourceChanged, src.OwnerID, src.OwnerHash, requestID,
		contract.ThreadSourceChangedData{SourceID: src.ID, ThreadID: src.ThreadID, Kind: src.Kind, URL: src.URL,
			NodeID: p.NodeID, Change: change, PulledAt: clock.Format(p.At)})
}
