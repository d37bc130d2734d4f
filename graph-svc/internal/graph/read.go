package graph

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
)

// Graph pages.
const (
	// PageBodyBytes bounds the node bodies one page carries: a page stops early (its
	// next_cursor reads on) once its bodies passed it, so a page of large nodes stays a bounded
	// response. A page always holds at least one item.
	PageBodyBytes = 1 << 20
	// chainWindow is how far from a message's position in the thread's messages the replies_to
	// edge of a message whose event named none (an earlier release's) looks for the message
	// created just before it: messages of the two sides travel in different partitions, so
	// neighbours may be projected out of order. Such a message costs its page one find of
	// 2×chainWindow+1 messages.
	chainWindow = 16
)

// GraphScope is the cursor scope of a thread's graph pages.
func GraphScope(threadID string) string { return "graph:" + threadID }

// GraphPage says which page of a graph to read: up to Limit items before the key Before (""
// from the newest), as of AsOf (nil: now).
type GraphPage struct {
	Before string
	Limit  int
	AsOf   *time.Time
	// Cursor makes the next_cursor of a page from the key to read before.
	Cursor func(key string) string
}

// GraphReadStore reads the pages of a thread's graph.
type GraphReadStore interface {
	GraphPage(ctx context.Context, threadID, before string, until *time.Time, limit int) ([]store.Item[store.GraphItem], string, error)
	Invalidations(ctx context.Context, nodeIDs []string) (map[string]*store.Invalidation, error)
	MessagesAround(ctx context.Context, threadID string, first, last int64) ([]store.Numbered[store.MessageRef], error)
}

// Graph reads one page of a thread's graph as the caller may see it: every node but the other
// side's owner_only ones, and the edges between visible nodes. With AsOf, only what existed
// then, each node with the validity it had then. The page is one find of the thread's graph
// range; besides it a read costs the thread, the other participant's hash and one find of the
// page's validity facts (and one find per message of an earlier release's event), whatever the
// thread holds; the hash and the page are read at once.
func (s *Service) Graph(ctx context.Context, c *contract.Principal, threadID string, pg GraphPage) (*GraphView, error) {
	th, err := s.thread(ctx, threadID, c.ObjectID)
	if err != nil {
		return nil, err
	}
	// The hashes and the page at once: neither needs the other.
	var hashes map[string]string
	var entries []store.Item[store.GraphItem]
	var next string
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		hashes, err = s.currentHashes(gctx, th, c)
		return err
	})
	g.Go(func() (err error) {
		entries, next, err = s.Store.GraphPage(gctx, th.ID, pg.Before, pg.AsOf, pg.Limit)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	entries, next = cutToBudget(entries, next)
	out := &GraphView{ThreadID: th.ID, AsOf: clock.FormatPtr(pg.AsOf), Nodes: []NodeView{}, Edges: []EdgeView{}}
	if next != "" && pg.Cursor != nil {
		out.NextCursor = contract.Optional(pg.Cursor(next))
	}
	existed := func(at time.Time) bool { return pg.AsOf == nil || !at.After(*pg.AsOf) }
	var nodes []*store.Node
	var edges []store.Edge
	seen := map[string]bool{}
	for _, e := range entries {
		if n := e.Value.Node; n != nil {
			if seen[n.ID] {
				continue // appended twice by a projection that crashed half-way
			}
			seen[n.ID] = true
		}
		switch {
		case e.Value.Node != nil && existed(e.Value.Node.CreatedAt) && visibleTo(e.Value.Node, c.ObjectID):
			nodes = append(nodes, e.Value.Node)
		case e.Value.Edge != nil && existed(e.Value.Edge.CreatedAt) && edgeVisibleTo(e.Value.Edge, c.ObjectID):
			edges = append(edges, *e.Value.Edge)
		}
	}
	chain, err := s.messageChain(ctx, th.ID, entries)
	if err != nil {
		return nil, err
	}
	for _, e := range append(chain, derivedEdges(nodes)...) {
		if !seen[e.ID] && existed(e.CreatedAt) && edgeVisibleTo(&e, c.ObjectID) {
			seen[e.ID] = true
			edges = append(edges, e)
		}
	}
	invalid, err := s.invalidations(ctx, nodes)
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		var inv *store.Invalidation
		if v := invalid[n.ID]; v != nil && existed(v.InvalidAt) {
			inv = v
		}
		v := nodeView(n, inv)
		v.AuthorHash = cmp.Or(hashes[n.AuthorID], v.AuthorHash)
		out.Nodes = append(out.Nodes, v)
	}
	for i := range edges {
		v := edgeView(&edges[i])
		v.AuthorHash = cmp.Or(hashes[edges[i].AuthorID], v.AuthorHash)
		out.Edges = append(out.Edges, v)
	}
	slices.SortStableFunc(out.Nodes, func(a, b NodeView) int { return byTime(a.CreatedAt, a.ID, b.CreatedAt, b.ID) })
	slices.SortStableFunc(out.Edges, func(a, b EdgeView) int { return byTime(a.CreatedAt, a.ID, b.CreatedAt, b.ID) })
	return out, nil
}

func byTime(at1, id1, at2, id2 string) int {
	return cmp.Or(strings.Compare(at1, at2), strings.Compare(id1, id2))
}

// cutToBudget ends a page (items newest first) once its node bodies passed PageBodyBytes; the
// cut items are the next page's.
func cutToBudget(items []store.Item[store.GraphItem], next string) ([]store.Item[store.GraphItem], string) {
	total := 0
	for i, e := range items {
		if e.Value.Node != nil {
			total += len(e.Value.Node.Body)
		}
		if total > PageBodyBytes && i > 0 {
			return items[:i], items[i-1].Key
		}
	}
	return items, next
}

// edgeVisibleTo reports whether an edge is shown to a participant: every edge but those joining
// the other side's owner_only nodes.
func edgeVisibleTo(e *store.Edge, objectID string) bool {
	return e.Private == "" || e.Private == objectID
}

// invalidations reads the validity facts of the page's nodes in one find.
func (s *Service) invalidations(ctx context.Context, nodes []*store.Node) (map[string]*store.Invalidation, error) {
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.ID
	}
	return s.Store.Invalidations(ctx, ids)
}

// derivedEdges are the edges the page's nodes record themselves: a decision's supersedes edges
// and a source change's derived_from edge.
func derivedEdges(nodes []*store.Node) []store.Edge {
	var out []store.Edge
	for _, n := range nodes {
		for _, old := range n.Supersedes {
			e := supersedesEdge(n, old)
			if slices.Contains(n.PrivateSupersedes, old) {
				e.Private = n.AuthorID
			}
			out = append(out, *e)
		}
		if n.DerivedFrom != "" {
			out = append(out, store.Edge{ID: fmt.Sprintf("edg_%s_%s", n.ID, n.DerivedFrom), ThreadID: n.ThreadID, From: n.ID,
				To: n.DerivedFrom, Type: "derived_from", AuthorID: n.AuthorID, AuthorHash: n.AuthorHash, SourceID: n.SourceID,
				CreatedAt: n.CreatedAt})
		}
	}
	return out
}

// messageChain returns the replies_to edges of the page's message nodes: from each message to
// the one its event named, or, for events that named none (earlier releases), the one created
// just before it, looked for among its neighbours in the thread's messages (chainWindow on each
// side, one find).
func (s *Service) messageChain(ctx context.Context, threadID string, entries []store.Item[store.GraphItem]) ([]store.Edge, error) {
	var out []store.Edge
	for _, e := range entries {
		n, seq := e.Value.Node, e.Value.MsgSeq
		if n == nil || n.Type != TypeMessage {
			continue
		}
		if n.PrevNodeID != "" {
			out = append(out, replyEdge(threadID, n, n.PrevNodeID))
			continue
		}
		if seq == 0 {
			continue
		}
		around, err := s.Store.MessagesAround(ctx, threadID, seq-chainWindow, seq+chainWindow)
		if err != nil {
			return nil, err
		}
		var prev *store.MessageRef
		for i := range around {
			ref := &around[i].Value
			if around[i].Seq == seq || !before(ref, n) {
				continue
			}
			if prev == nil || before(prev, &store.Node{ID: ref.NodeID, CreatedAt: ref.CreatedAt}) {
				prev = ref
			}
		}
		if prev != nil {
			out = append(out, replyEdge(threadID, n, prev.NodeID))
		}
	}
	return out, nil
}

// replyEdge is the replies_to edge of message node n to the node of the message it follows: its
// id, author and time are its message's.
func replyEdge(threadID string, n *store.Node, prevNodeID string) store.Edge {
	return store.Edge{ID: fmt.Sprintf("edg_%s_%s", n.MessageID, strings.TrimPrefix(prevNodeID, "nod_")),
		ThreadID: threadID, From: n.ID, To: prevNodeID, Type: EdgeRepliesTo, AuthorID: n.AuthorID,
		AuthorHash: n.AuthorHash, MessageID: n.MessageID, CreatedAt: n.CreatedAt}
}

// before reports whether message ref was created before node n (ties broken by id).
func before(ref *store.MessageRef, n *store.Node) bool {
	return cmp.Or(ref.CreatedAt.Compare(n.CreatedAt), strings.Compare(ref.NodeID, n.ID)) < 0
}
