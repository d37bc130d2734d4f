package graph

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
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
	ValidFrom     *string  `json:"valid_from"`
	ValidUntil    *string  `json:"valid_until"`
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

// GraphView is one page of a thread's graph as a participant reads it: the nodes and edges
// written in a stretch of the thread's history, each page older than the one before;
// NextCursor reads the next (nil on the oldest page). Nodes and edges are listed oldest first.
type GraphView struct {
	ThreadID   string     `json:"thread_id"`
	AsOf       *string    `json:"as_of"`
	Nodes      []NodeView `json:"nodes"`
	Edges      []EdgeView `json:"edges"`
	NextCursor *string    `json:"next_cursor"`
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

// NodeStore stores the nodes and edges participants write, within their quotas.
type NodeStore interface {
	Node(ctx context.Context, id string) (*store.Node, error)
	InsertNode(ctx context.Context, n *store.Node) error
	AppendGraph(ctx context.Context, threadID string, it store.GraphItem) error
	AppendGraphItems(ctx context.Context, threadID string, items []store.GraphItem) error
	Reserve(ctx context.Context, list string, max int64, key string) (bool, error)
	QuotaUsed(ctx context.Context, list string) (int64, error)
}

// AddNode writes a node of the caller into a thread it takes part in, within the caller's and
// the thread's node quotas.
func (s *Service) AddNode(ctx context.Context, c *contract.Principal, threadID string, d NodeDraft) (*NodeView, error) {
	if !slices.Contains(NodeTypes, d.Type) {
		return nil, apierr.BadRequest(apierr.CodeInvalidKind, "type must be one of %s", strings.Join(NodeTypes, ", "))
	}
	if !slices.Contains(writableNodeTypes, d.Type) {
		return nil, apierr.BadRequest(apierr.CodeInvalidKind,
			"%s nodes are not written here: message nodes come from POST /api/messages, decisions from POST /api/threads/{threadId}/decision", d.Type)
	}
	vis, err := visibility(d.Visibility)
	if err != nil {
		return nil, err
	}
	if err := s.checkBody("body", d.Body); err != nil {
		return nil, err
	}
	th, err := s.writableThread(ctx, threadID, c)
	if err != nil {
		return nil, err
	}
	n := &store.Node{ID: apikey.NewID("nod"), ThreadID: th.ID, Type: d.Type, Body: d.Body, Visibility: vis,
		AuthorID: c.ObjectID, AuthorHash: c.Hash, CreatedAt: clock.Now()}
	if err := s.addNode(ctx, n); err != nil {
		return nil, err
	}
	v := nodeView(n, nil)
	return &v, nil
}

// writableThread returns a thread the caller takes part in and may write into: one whose other
// participant has not blocked it.
func (s *Service) writableThread(ctx context.Context, threadID string, c *contract.Principal) (*store.Thread, error) {
	th, err := s.thread(ctx, threadID, c.ObjectID)
	if err != nil {
		return nil, err
	}
	if err := s.checkNotBlocked(ctx, th, c); err != nil {
		return nil, err
	}
	return th, nil
}

// addNode takes a slot of the author's and the thread's node quotas, stores the node (read by
// id when an edge or a decision names it), appends it to the thread's graph and indexes it for
// the participants' memory search.
func (s *Service) addNode(ctx context.Context, n *store.Node) error {
	if err := s.reserveNode(ctx, n); err != nil {
		return err
	}
	if err := s.markTookPart(ctx, [2]string{n.ThreadID, n.AuthorID}); err != nil {
		return err
	}
	if err := s.Store.InsertNode(ctx, n); err != nil {
		return err
	}
	if err := s.Store.AppendGraph(ctx, n.ThreadID, store.GraphItem{Node: n}); err != nil {
		return err
	}
	return s.indexInThread(ctx, n)
}

// Quota lists: one slot per node or edge written into a thread (messages, which mailbox-svc
// bounds, take none).
func nodeQuota(threadID string) string           { return "quota:nodes:" + threadID }
func authorQuota(threadID, author string) string { return "quota:nodes:" + threadID + "/" + author }
func edgeQuota(threadID, author string) string   { return "quota:edges:" + threadID + "/" + author }

// reserveNode takes a slot of the author's quota in the thread, then of the thread's.
func (s *Service) reserveNode(ctx context.Context, n *store.Node) error {
	err := s.reserve(ctx, authorQuota(n.ThreadID, n.AuthorID), s.Limits.NodesPerAuthor, n.ID, "nodes written by one participant in one thread")
	if err != nil {
		return err
	}
	return s.reserve(ctx, nodeQuota(n.ThreadID), s.Limits.NodesPerThread, n.ID, "nodes written in one thread")
}

// reserve takes a slot of a quota list for key, or refuses with the quota's error naming what
// it bounds.
func (s *Service) reserve(ctx context.Context, list string, max int64, key, what string) error {
	ok, err := s.Store.Reserve(ctx, list, max, key)
	if err == nil && !ok {
		return apierr.QuotaExceeded(what, max)
	}
	return err
}

// checkBody refuses an empty body or one over the node size quota.
func (s *Service) checkBody(field, body string) error {
	if strings.TrimSpace(body) == "" {
		return apierr.BadRequest(apierr.CodeInvalidRequest, "%s must not be empty", field)
	}
	if len(body) > s.Limits.NodeBytes {
		return apierr.Errorf(http.StatusRequestEntityTooLarge, apierr.CodePayloadTooLarge, "%s is longer than %d bytes, the most a node holds", field, s.Limits.NodeBytes)
	}
	return nil
}

// AddEdge writes an edge of the caller between two nodes of a thread it takes part in, within
// the caller's edge quota. supersedes edges are made only by decisions.
func (s *Service) AddEdge(ctx context.Context, c *contract.Principal, threadID string, d EdgeDraft) (*EdgeView, error) {
	if !slices.Contains(EdgeTypes, d.Type) {
		return nil, apierr.BadRequest(apierr.CodeInvalidKind, "type must be one of %s", strings.Join(EdgeTypes, ", "))
	}
	if d.Type == EdgeSupersedes {
		return nil, apierr.BadRequest(apierr.CodeInvalidKind,
			"supersedes edges are made by decisions: POST /api/threads/{threadId}/decision with supersedes_node_ids")
	}
	if d.From == d.To {
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "an edge joins two different nodes")
	}
	th, err := s.writableThread(ctx, threadID, c)
	if err != nil {
		return nil, err
	}
	ends, err := s.nodesOfThread(ctx, th.ID, c.ObjectID, map[string]string{d.From: "from_node_id", d.To: "to_node_id"})
	if err != nil {
		return nil, err
	}
	e := &store.Edge{ID: apikey.NewID("edg"), ThreadID: th.ID, From: d.From, To: d.To, Type: d.Type,
		AuthorID: c.ObjectID, AuthorHash: c.Hash, CreatedAt: clock.Now()}
	for _, n := range ends {
		if n.Visibility == OwnerOnly {
			e.Private = n.AuthorID
		}
	}
	if err := s.reserve(ctx, edgeQuota(th.ID, c.ObjectID), s.Limits.EdgesPerAuthor, e.ID, "edges written by one participant in one thread"); err != nil {
		return nil, err
	}
	if err := s.markTookPart(ctx, [2]string{th.ID, c.ObjectID}); err != nil {
		return nil, err
	}
	if err := s.Store.AppendGraph(ctx, th.ID, store.GraphItem{Edge: e}); err != nil {
		return nil, err
	}
	v := edgeView(e)
	return &v, nil
}

// nodesOfThread reads the nodes named by fields (node id → the request field naming it), one
// point read each, and refuses any that is not a node of the thread the caller may see.
func (s *Service) nodesOfThread(ctx context.Context, threadID, objectID string, fields map[string]string) ([]store.Node, error) {
	ids := slices.Sorted(maps.Keys(fields))
	out := make([]store.Node, 0, len(ids))
	for _, id := range ids {
		if id == "" || len(id) > MaxNodeID {
			return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "%s does not name a node of this thread", fields[id])
		}
		n, err := s.Store.Node(ctx, id)
		if err != nil && !errors.Is(err, mongox.ErrNotFound) {
			return nil, err
		}
		if err != nil || n.ThreadID != threadID || !visibleTo(n, objectID) {
			return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "%s %q does not name a node of this thread", fields[id], id)
		}
		out = append(out, *n)
	}
	return out, nil
}

// ParseTime reads an optional date-time field (empty: nil), in UTC.
func ParseTime(field, raw string) (*time.Time, error) {
	if raw == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "%s must be an ISO 8601 date-time, for example 2026-01-31T12:00:00.000Z", field)
	}
	t = t.UTC()
	return &t, nil
}

func nodeView(n *store.Node, inv *store.Invalidation) NodeView {
	v := NodeView{
		ID: n.ID, ThreadID: n.ThreadID, Type: n.Type, Title: contract.Optional(n.Title), Body: n.Body, Visibility: n.Visibility,
		AuthorHash: n.AuthorHash, Confidence: n.Confidence, Supersedes: n.Supersedes, MessageID: contract.Optional(n.MessageID),
		SourceID: contract.Optional(n.SourceID), CreatedAt: clock.Format(n.CreatedAt),
		ValidFrom: clock.FormatPtr(n.ValidFrom), ValidUntil: clock.FormatPtr(n.ValidUntil),
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
		MessageID: contract.Optional(e.MessageID), SourceID: contract.Optional(e.SourceID), CreatedAt: clock.Format(e.CreatedAt)}
}
