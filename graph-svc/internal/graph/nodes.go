package graph

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpx"
)

// NodeView is a node as a participant reads it. InvalidAt is set once a decision superseded it
// (InvalidatedBy names that decision); the node stays readable.
type NodeView struct {
	ID            string   `json:"id"`
	ThreadID      string   `json:"thread_id"`
	Type          string   `json:"type"`
	Title         *string  `json:"title"`
	Body          string   `json:"body"`
	Visibility    string   `json:"visibility"`
	AuthorHash    string   `json:"author_hash"`
	Confidence    *float64 `json:"confidence"`
	Supersedes    []string `json:"supersedes_node_ids"`
	MessageID     *string  `json:"message_id"`
	SourceID      *string  `json:"source_id"`
	CreatedAt     string   `json:"created_at"`
	InvalidAt     *string  `json:"invalid_at"`
	InvalidatedBy *string  `json:"invalidated_by"`
}

// EdgeView is an edge as a participant reads it.
type EdgeView struct {
	ID         string  `json:"id"`
	ThreadID   string  `json:"thread_id"`
	From       string  `json:"from_node_id"`
	To         string  `json:"to_node_id"`
	Type       string  `json:"type"`
	AuthorHash string  `json:"author_hash"`
	MessageID  *string `json:"message_id"`
	SourceID   *string `json:"source_id"`
	CreatedAt  string  `json:"created_at"`
}

// GraphView is a thread's graph as a participant reads it.
type GraphView struct {
	ThreadID string     `json:"thread_id"`
	AsOf     *string    `json:"as_of"`
	Nodes    []NodeView `json:"nodes"`
	Edges    []EdgeView `json:"edges"`
}

// NodeDraft is a node a participant writes.
type NodeDraft struct {
	Type       string
	Body       string
	Visibility string
}

// EdgeDraft is an edge a participant writes.
type EdgeDraft struct {
	From, To, Type string
}

// writableNodeTypes are the node types written through POST …/nodes: message nodes come from
// the mailbox and decision nodes from POST …/decision.
var writableNodeTypes = slices.DeleteFunc(slices.Clone(NodeTypes), func(t string) bool { return t == TypeMessage || t == TypeDecision })

// AddNode writes a node of the caller into a thread it takes part in.
func (s *Service) AddNode(ctx context.Context, c Caller, threadID string, d NodeDraft) (*NodeView, error) {
	if !slices.Contains(NodeTypes, d.Type) {
		return nil, httpx.BadRequest(httpx.CodeInvalidKind, "type must be one of %s", strings.Join(NodeTypes, ", "))
	}
	if !slices.Contains(writableNodeTypes, d.Type) {
		return nil, httpx.BadRequest(httpx.CodeInvalidKind,
			"%s nodes are not written here: message nodes come from POST /api/messages, decisions from POST /api/threads/{threadId}/decision", d.Type)
	}
	vis, err := visibility(d.Visibility)
	if err != nil {
		return nil, err
	}
	if err := checkText("body", d.Body, MaxBody); err != nil {
		return nil, err
	}
	th, err := s.thread(ctx, threadID, c.ObjectID)
	if err != nil {
		return nil, err
	}
	n := &store.Node{ID: apikey.NewID("nod"), ThreadID: th.ID, Type: d.Type, Body: d.Body, Visibility: vis,
		AuthorID: c.ObjectID, AuthorHash: c.Hash, CreatedAt: clock.Now()}
	if err := s.Store.InsertNode(ctx, n); err != nil {
		return nil, err
	}
	v := nodeView(n, nil)
	return &v, nil
}

// AddEdge writes an edge of the caller between two nodes of a thread it takes part in.
// supersedes edges are made only by decisions.
func (s *Service) AddEdge(ctx context.Context, c Caller, threadID string, d EdgeDraft) (*EdgeView, error) {
	if !slices.Contains(EdgeTypes, d.Type) {
		return nil, httpx.BadRequest(httpx.CodeInvalidKind, "type must be one of %s", strings.Join(EdgeTypes, ", "))
	}
	if d.Type == EdgeSupersedes {
		return nil, httpx.BadRequest(httpx.CodeInvalidKind,
			"supersedes edges are made by decisions: POST /api/threads/{threadId}/decision with supersedes_node_ids")
	}
	if d.From == d.To {
		return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "an edge joins two different nodes")
	}
	th, err := s.thread(ctx, threadID, c.ObjectID)
	if err != nil {
		return nil, err
	}
	if _, err := s.nodesOfThread(ctx, th.ID, c.ObjectID, map[string]string{d.From: "from_node_id", d.To: "to_node_id"}); err != nil {
		return nil, err
	}
	e := &store.Edge{ID: apikey.NewID("edg"), ThreadID: th.ID, From: d.From, To: d.To, Type: d.Type,
		AuthorID: c.ObjectID, AuthorHash: c.Hash, CreatedAt: clock.Now()}
	if err := s.Store.InsertEdge(ctx, e); err != nil {
		return nil, err
	}
	v := edgeView(e)
	return &v, nil
}

// nodesOfThread reads the nodes named by fields (node id → the request field naming it) and
// refuses any that is not a node of the thread the caller may see.
func (s *Service) nodesOfThread(ctx context.Context, threadID, objectID string, fields map[string]string) ([]store.Node, error) {
	ids := make([]string, 0, len(fields))
	for id, field := range fields {
		if id == "" || len(id) > MaxNodeID {
			return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "%s does not name a node of this thread", field)
		}
		ids = append(ids, id)
	}
	found, err := s.Store.NodesByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]store.Node, len(found))
	for _, n := range found {
		if n.ThreadID == threadID && visibleTo(&n, objectID) {
			byID[n.ID] = n
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		if _, ok := byID[id]; !ok {
			return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "%s %q does not name a node of this thread", fields[id], id)
		}
	}
	return found, nil
}

// Graph reads a thread's graph as the caller may see it: every node but the other side's
// owner_only ones, and the edges between visible nodes. With asOf, only what existed then, each
// node with the validity it had then.
func (s *Service) Graph(ctx context.Context, c Caller, threadID string, asOf *time.Time) (*GraphView, error) {
	th, err := s.thread(ctx, threadID, c.ObjectID)
	if err != nil {
		return nil, err
	}
	nodes, err := s.Store.NodesOf(ctx, th.ID)
	if err != nil {
		return nil, err
	}
	stored, err := s.Store.EdgesOf(ctx, th.ID)
	if err != nil {
		return nil, err
	}
	edges := messageChain(nodes)
	for i := range stored {
		if !projectedEdge(&stored[i]) {
			edges = append(edges, stored[i])
		}
	}
	invalid, err := s.Store.InvalidationsOf(ctx, th.ID)
	if err != nil {
		return nil, err
	}
	edges = impliedBy(nodes, edges, invalid)
	slices.SortStableFunc(edges, func(a, b store.Edge) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	hashes := s.currentHashes(ctx, th, c)
	existed := func(at time.Time) bool { return asOf == nil || !at.After(*asOf) }
	out := &GraphView{ThreadID: th.ID, AsOf: clock.FormatPtr(asOf), Nodes: []NodeView{}, Edges: []EdgeView{}}
	shown := map[string]bool{}
	for i := range nodes {
		n := &nodes[i]
		if !existed(n.CreatedAt) || !visibleTo(n, c.ObjectID) {
			continue
		}
		shown[n.ID] = true
		var inv *store.Invalidation
		if v, ok := invalid[n.ID]; ok && existed(v.InvalidAt) {
			inv = &v
		}
		v := nodeView(n, inv)
		if h := hashes[n.AuthorID]; h != "" {
			v.AuthorHash = h
		}
		out.Nodes = append(out.Nodes, v)
	}
	for i := range edges {
		e := &edges[i]
		if existed(e.CreatedAt) && shown[e.From] && shown[e.To] {
			v := edgeView(e)
			if h := hashes[e.AuthorID]; h != "" {
				v.AuthorHash = h
			}
			out.Edges = append(out.Edges, v)
		}
	}
	return out, nil
}

// currentHashes maps the thread's participants to their hashes now, so that a read names authors
// by their current hash after a custom hash replaced the one they wrote under. Should
// mailbox-svc not answer, the read names them by the hash they wrote under.
func (s *Service) currentHashes(ctx context.Context, th *store.Thread, c Caller) map[string]string {
	out := map[string]string{c.ObjectID: c.Hash}
	if th.Self {
		return out
	}
	mt, err := s.Mailbox.Thread(ctx, th.ID)
	if err != nil {
		s.Log.Warn("reading the thread's participants failed; authors keep the hash they wrote under", "error", err)
		return out
	}
	for _, p := range mt.Participants {
		if p.Hash != "" {
			out[p.ObjectID] = p.Hash
		}
	}
	return out
}

// ErrBadAsOf says that as_of is not a date-time.
var ErrBadAsOf = errors.New("as_of must be an ISO 8601 date-time, for example 2026-01-31T12:00:00.000Z")

// ParseAsOf reads the as_of query parameter (empty: now).
func ParseAsOf(raw string) (*time.Time, error) {
	if raw == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "%s", ErrBadAsOf.Error())
	}
	t = t.UTC()
	return &t, nil
}

func nodeView(n *store.Node, inv *store.Invalidation) NodeView {
	v := NodeView{
		ID: n.ID, ThreadID: n.ThreadID, Type: n.Type, Title: optional(n.Title), Body: n.Body, Visibility: n.Visibility,
		AuthorHash: n.AuthorHash, Confidence: n.Confidence, Supersedes: n.Supersedes, MessageID: optional(n.MessageID),
		SourceID: optional(n.SourceID), CreatedAt: clock.Format(n.CreatedAt),
	}
	if v.Supersedes == nil {
		v.Supersedes = []string{}
	}
	if inv != nil {
		v.InvalidAt, v.InvalidatedBy = clock.FormatPtr(&inv.InvalidAt), &inv.By
	}
	return v
}

func edgeView(e *store.Edge) EdgeView {
	return EdgeView{ID: e.ID, ThreadID: e.ThreadID, From: e.From, To: e.To, Type: e.Type, AuthorHash: e.AuthorHash,
		MessageID: optional(e.MessageID), SourceID: optional(e.SourceID), CreatedAt: clock.Format(e.CreatedAt)}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
