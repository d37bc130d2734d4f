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

// ProjectMessage makes a message of mailbox-svc a message node of its thread's graph, authored
// by its sender and visible to both participants, and records the thread's participants. Every
// step is keyed by the message, so repeating it changes nothing.
//
// Its replies_to edge, to the thread's message before it, is not stored: a read derives it from
// the message nodes it reads anyway (see messageChain). Messages of one thread may be projected
// out of order (each is keyed by its recipient, so the two sides' messages travel in different
// partitions); stored edges would need the thread's other message nodes at projection time, a
// query by thread for every message.
func (s *Service) ProjectMessage(ctx context.Context, m contract.MessageCreatedData) error {
	at := parseTime(m.CreatedAt)
	if !s.knownThread(m.ThreadID) {
		th := &store.Thread{ID: m.ThreadID, Participants: []string{m.FromObjectID, m.ToObjectID}, CreatedAt: at}
		if err := s.Store.AddThread(ctx, th); err != nil {
			return err
		}
		s.rememberThread(m.ThreadID)
	}
	n := &store.Node{ID: MessageNodeID(m.MessageID), ThreadID: m.ThreadID, Type: TypeMessage, Body: m.Body,
		Visibility: Participants, AuthorID: m.FromObjectID, AuthorHash: m.FromHash, MessageID: m.MessageID, CreatedAt: at}
	return s.Store.AddNode(ctx, n)
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
