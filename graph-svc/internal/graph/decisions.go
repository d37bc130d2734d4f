package graph

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// DecisionDraft is a decision a participant records.
type DecisionDraft struct {
	Title      string
	Body       string
	Confidence *float64
	Supersedes []string
	// ValidFrom and ValidUntil are when what the decision says holds in the world (optional).
	ValidFrom, ValidUntil *time.Time
}

// DecisionStore records what a decision changes besides its node: the validity facts of what it
// supersedes and the decisions lists, and reads who took part in a thread.
type DecisionStore interface {
	Invalidate(ctx context.Context, v *store.Invalidation) error
	SupersedePostings(ctx context.Context, ids []string, at time.Time, by string) error
	TookPartIn(ctx context.Context, threadID, objectID string) (bool, error)
	AppendDecision(ctx context.Context, objectID string, d store.DecisionRef) error
}

// Decide records a decision node in a thread the caller takes part in and may write into. Each
// node it supersedes (only those it names, only in this thread) gains a validity fact and stays
// readable; the decision's supersedes edges are read from the decision itself. Both
// participants learn of the decision through decision.recorded, staged before the decision's
// insert.
func (s *Service) Decide(ctx context.Context, requestID string, c *contract.Principal, threadID string, d DecisionDraft) (*NodeView, error) {
	if d.Confidence != nil && (*d.Confidence < 0 || *d.Confidence > 1) {
		return nil, apierr.BadRequest(apierr.CodeInvalidConfidence, "confidence must be between 0 and 1 inclusive")
	}
	if err := checkText("title", d.Title, MaxTitle); err != nil {
		return nil, err
	}
	if err := s.checkBody("body", d.Body); err != nil {
		return nil, err
	}
	if len(d.Supersedes) > MaxSupersedes {
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "supersedes_node_ids holds more than %d nodes", MaxSupersedes)
	}
	if d.ValidFrom != nil && d.ValidUntil != nil && !d.ValidUntil.After(*d.ValidFrom) {
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "valid_until must be after valid_from")
	}
	th, err := s.writableThread(ctx, threadID, c)
	if err != nil {
		return nil, err
	}
	n := &store.Node{ID: apikey.NewID("nod"), ThreadID: th.ID, Type: TypeDecision, Title: d.Title, Body: d.Body,
		Visibility: Participants, AuthorID: c.ObjectID, AuthorHash: c.Hash, Confidence: d.Confidence,
		ValidFrom: d.ValidFrom, ValidUntil: d.ValidUntil,
		Supersedes: slices.Compact(slices.Sorted(slices.Values(d.Supersedes))), CreatedAt: clock.Now()}
	fields := make(map[string]string, len(n.Supersedes))
	for _, id := range n.Supersedes {
		fields[id] = "supersedes_node_ids"
	}
	old, err := s.nodesOfThread(ctx, th.ID, c.ObjectID, fields) // no read when it supersedes none
	if err != nil {
		return nil, err
	}
	for _, o := range old {
		if o.Visibility == OwnerOnly {
			n.PrivateSupersedes = append(n.PrivateSupersedes, o.ID)
		}
	}
	parts, err := s.participants(ctx, th, c)
	if err != nil {
		return nil, err
	}
	accepted, err := s.accepted(ctx, th, c)
	if err != nil {
		return nil, err
	}
	if err := s.reserveNode(ctx, n); err != nil {
		return nil, err
	}
	if err := s.markTookPart(ctx, [2]string{th.ID, c.ObjectID}); err != nil {
		return nil, err
	}
	evs := decisionEvents(requestID, n, parts, accepted)
	n.Events = events.IDs(evs...)
	if err := s.Outbox.Stage(ctx, store.Nodes, n.ID, evs...); err != nil {
		return nil, err
	}
	if err := s.Store.InsertNode(ctx, n); err != nil {
		return nil, err
	}
	s.Outbox.Confirm(evs...)
	// The validity facts go first, so that a decision shown in the graph has invalidated what it
	// supersedes.
	for _, old := range n.Supersedes {
		if err := s.Store.Invalidate(ctx, invalidation(n, old)); err != nil {
			return nil, err
		}
	}
	if err := s.supersedeInMemory(ctx, th, old); err != nil {
		return nil, err
	}
	if err := s.Store.AppendGraph(ctx, th.ID, store.GraphItem{Node: n}); err != nil {
		return nil, err
	}
	if err := s.recordDecision(ctx, n, parts); err != nil {
		return nil, err
	}
	if err := s.indexNode(ctx, n, th.Participants); err != nil { // parts' objects, in their order
		return nil, err
	}
	v := nodeView(n, nil)
	return &v, nil
}

// supersedeInMemory copies the validity facts of the nodes a decision supersedes onto their
// postings in the memory index of each object that indexed them, so that a search filters
// them without reading the facts. The facts are read back in one find (a node an earlier
// decision superseded keeps that decision's fact), then one update per fact: usually one.
func (s *Service) supersedeInMemory(ctx context.Context, th *store.Thread, old []store.Node) error {
	ids := make([]string, len(old))
	for i, o := range old {
		ids[i] = o.ID
	}
	invs, err := s.Store.Invalidations(ctx, ids)
	if err != nil {
		return err
	}
	byFact := map[string][]string{}
	var facts []*store.Invalidation
	for i := range old {
		inv := invs[old[i].ID]
		if inv == nil {
			continue
		}
		if byFact[inv.By] == nil {
			facts = append(facts, inv)
		}
		byFact[inv.By] = append(byFact[inv.By], postingIDs(&old[i], append(slices.Clone(th.Participants), old[i].AuthorID))...)
	}
	for _, inv := range facts {
		if err := s.Store.SupersedePostings(ctx, byFact[inv.By], inv.InvalidAt, inv.By); err != nil {
			return err
		}
	}
	return nil
}

// accepted tells, for each participant of a thread, whether a decision the caller records there
// belongs in that participant's decision memory: the caller's own does, and the other side's
// when it wrote into the thread before (a point read of its participation mark). A stranger who
// opened a thread fills only its own memory, however many decisions it records.
func (s *Service) accepted(ctx context.Context, th *store.Thread, c *contract.Principal) (map[string]bool, error) {
	out := make(map[string]bool, len(th.Participants))
	for _, p := range th.Participants {
		if p == c.ObjectID {
			out[p] = true
			continue
		}
		took, err := s.Store.TookPartIn(ctx, th.ID, p)
		if err != nil {
			return nil, err
		}
		out[p] = took
	}
	return out, nil
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

// recordDecision lists the decision in each participant's decisions, which the ingest overview
// counts and names the latest of.
func (s *Service) recordDecision(ctx context.Context, n *store.Node, parts []contract.Participant) error {
	ref := store.DecisionRef{NodeID: n.ID, ThreadID: n.ThreadID, Title: n.Title, CreatedAt: n.CreatedAt}
	for _, p := range parts {
		if err := s.Store.AppendDecision(ctx, p.ObjectID, ref); err != nil {
			return err
		}
	}
	return nil
}
