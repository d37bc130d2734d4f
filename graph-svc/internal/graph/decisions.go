package graph

import (
	"context"
	"fmt"
	"slices"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
)

// DecisionDraft is a decision a participant records.
type DecisionDraft struct {
	Title      string
	Body       string
	Confidence *float64
	Supersedes []string
}

// Decide records a decision node in a thread the caller takes part in. Each node it supersedes
// (only those it names, only in this thread) gains a supersedes edge from the decision and a
// validity fact, and stays readable. Both participants learn of the decision through
// decision.recorded, staged before the decision's insert.
func (s *Service) Decide(ctx context.Context, requestID string, c Caller, threadID string, d DecisionDraft) (*NodeView, error) {
	if d.Confidence != nil && (*d.Confidence < 0 || *d.Confidence > 1) {
		return nil, httpx.BadRequest(httpx.CodeInvalidConfidence, "confidence must be between 0 and 1 inclusive")
	}
	if err := checkText("title", d.Title, MaxTitle); err != nil {
		return nil, err
	}
	if err := checkText("body", d.Body, MaxBody); err != nil {
		return nil, err
	}
	if len(d.Supersedes) > MaxSupersedes {
		return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "supersedes_node_ids holds more than %d nodes", MaxSupersedes)
	}
	th, err := s.thread(ctx, threadID, c.ObjectID)
	if err != nil {
		return nil, err
	}
	supersedes := slices.Compact(slices.Sorted(slices.Values(d.Supersedes)))
	if len(supersedes) > 0 {
		fields := make(map[string]string, len(supersedes))
		for _, id := range supersedes {
			fields[id] = "supersedes_node_ids"
		}
		if _, err := s.nodesOfThread(ctx, th.ID, c.ObjectID, fields); err != nil {
			return nil, err
		}
	}
	parts, err := s.participants(ctx, th, c)
	if err != nil {
		return nil, err
	}
	n := &store.Node{ID: apikey.NewID("nod"), ThreadID: th.ID, Type: TypeDecision, Title: d.Title, Body: d.Body,
		Visibility: Participants, AuthorID: c.ObjectID, AuthorHash: c.Hash, Confidence: d.Confidence,
		Supersedes: supersedes, CreatedAt: clock.Now()}
	evs := decisionEvents(requestID, n, parts)
	n.Events = events.IDs(evs...)
	if err := s.Outbox.Stage(ctx, store.Nodes, n.ID, evs...); err != nil {
		return nil, err
	}
	if err := s.Store.InsertNode(ctx, n); err != nil {
		return nil, err
	}
	s.Outbox.Confirm(evs...)
	if err := s.supersede(ctx, n); err != nil {
		return nil, err
	}
	v := nodeView(n, nil)
	return &v, nil
}

// supersede records decision n's supersedes edges, then the validity facts of the nodes it
// supersedes. Both are keyed by what they record, so a node superseded twice keeps the first
// decision's invalid_at and gains a second edge. Should this stop half-way, reads still show
// what the decision's own document records (see impliedBy).
func (s *Service) supersede(ctx context.Context, n *store.Node) error {
	for _, old := range n.Supersedes {
		if err := s.Store.AddEdge(ctx, supersedesEdge(n, old)); err != nil {
			return err
		}
	}
	for _, old := range n.Supersedes {
		if err := s.Store.Invalidate(ctx, invalidation(n, old)); err != nil {
			return err
		}
	}
	return nil
}

// supersedesEdge is the edge from decision d to a node it supersedes.
func supersedesEdge(d *store.Node, old string) *store.Edge {
	return &store.Edge{ID: fmt.Sprintf("edg_%s_%s", d.ID, old), ThreadID: d.ThreadID, From: d.ID, To: old,
		Type: EdgeSupersedes, AuthorID: d.AuthorID, AuthorHash: d.AuthorHash, CreatedAt: d.CreatedAt}
}

// invalidation is the validity fact decision d gives a node it supersedes.
func invalidation(d *store.Node, old string) *store.Invalidation {
	return &store.Invalidation{NodeID: old, ThreadID: d.ThreadID, By: d.ID, InvalidAt: d.CreatedAt}
}

// impliedBy adds to a thread's edges and validity facts those its decisions record but the
// store lacks (a write that stopped between the decision's insert and theirs), so a read shows
// every supersession a decision answered 201 for. Of two decisions superseding one node, the
// earlier one sets its invalid_at, as the stored facts do.
func impliedBy(nodes []store.Node, edges []store.Edge, invalid map[string]store.Invalidation) []store.Edge {
	have := make(map[string]bool, len(edges))
	for _, e := range edges {
		have[e.ID] = true
	}
	for i := range nodes {
		d := &nodes[i]
		for _, old := range d.Supersedes {
			if e := supersedesEdge(d, old); !have[e.ID] {
				edges, have[e.ID] = append(edges, *e), true
			}
			if v, ok := invalid[old]; !ok || d.CreatedAt.Before(v.InvalidAt) {
				invalid[old] = *invalidation(d, old)
			}
		}
	}
	return edges
}
