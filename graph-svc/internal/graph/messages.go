package graph

import (
	"context"
	"fmt"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
)

// MessageNodeID is the id of the node of a message: derived from the message, so that a
// redelivered message.created projects nothing new.
func MessageNodeID(messageID string) string { return "nod_" + messageID }

// ProjectMessages makes messages of mailbox-svc message nodes of their threads' graphs, each
// authored by its sender and visible to both participants, and records the threads'
// participants: the threads this process has not recorded yet in one insert, then the nodes in
// another. Every document is keyed by what it records, so repeating it changes nothing.
//
// A message's replies_to edge, to the thread's message before it, is not stored: a read derives
// it from the message nodes it reads anyway (see messageChain). Messages of one thread may be
// projected out of order (each is keyed by its recipient, so the two sides' messages travel in
// different partitions); stored edges would need the thread's other message nodes at projection
// time, a query by thread for every message.
func (s *Service) ProjectMessages(ctx context.Context, msgs []contract.MessageCreatedData) error {
	var threads []store.Thread
	nodes := make([]store.Node, 0, len(msgs))
	seen := map[string]bool{}
	for _, m := range msgs {
		at := parseTime(m.CreatedAt)
		if !seen[m.ThreadID] && !s.knownThread(m.ThreadID) {
			seen[m.ThreadID] = true
			threads = append(threads, store.Thread{ID: m.ThreadID, Participants: []string{m.FromObjectID, m.ToObjectID}, CreatedAt: at})
		}
		nodes = append(nodes, store.Node{ID: MessageNodeID(m.MessageID), ThreadID: m.ThreadID, Type: TypeMessage, Body: m.Body,
			Visibility: Participants, AuthorID: m.FromObjectID, AuthorHash: m.FromHash, MessageID: m.MessageID, CreatedAt: at})
	}
	if err := s.Store.AddThreads(ctx, threads); err != nil {
		return err
	}
	for _, t := range threads {
		s.rememberThread(t.ID)
	}
	return s.Store.AddNodes(ctx, nodes)
}

// messageChain returns the replies_to edges of a thread's message nodes: from each message to the
// one before it in creation order (ties broken by id). nodes are sorted oldest first. An edge's
// id, author and time are its message's, as when such edges were stored.
func messageChain(nodes []store.Node) []store.Edge {
	var out []store.Edge
	var prev *store.Node
	for i := range nodes {
		n := &nodes[i]
		if n.Type != TypeMessage || n.MessageID == "" {
			continue
		}
		if prev != nil {
			out = append(out, store.Edge{ID: fmt.Sprintf("edg_%s_%s", n.MessageID, prev.MessageID), ThreadID: n.ThreadID,
				From: n.ID, To: prev.ID, Type: EdgeRepliesTo, AuthorID: n.AuthorID, AuthorHash: n.AuthorHash,
				MessageID: n.MessageID, CreatedAt: n.CreatedAt})
		}
		prev = n
	}
	return out
}

// projectedEdge says whether e is a replies_to edge stored by an earlier version of
// ProjectMessage; reads derive those edges instead (an owner's own replies_to edges carry no
// message).
func projectedEdge(e *store.Edge) bool { return e.Type == EdgeRepliesTo && e.MessageID != "" }
