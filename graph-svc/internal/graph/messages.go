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
// by its sender and visible to both participants, with a replies_to edge to the thread's message
// before it (the newest message node created before it that graph-svc holds when it projects).
// It also records the thread's participants. Every step is keyed by the message: repeating it
// changes nothing.
func (s *Service) ProjectMessage(ctx context.Context, m contract.MessageCreatedData) error {
	at := parseTime(m.CreatedAt)
	th := &store.Thread{ID: m.ThreadID, Participants: []string{m.FromObjectID, m.ToObjectID}, CreatedAt: at}
	if err := s.Store.AddThread(ctx, th); err != nil {
		return err
	}
	n := &store.Node{ID: MessageNodeID(m.MessageID), ThreadID: m.ThreadID, Type: TypeMessage, Body: m.Body,
		Visibility: Participants, AuthorID: m.FromObjectID, AuthorHash: m.FromHash, MessageID: m.MessageID, CreatedAt: at}
	if err := s.Store.AddNode(ctx, n); err != nil {
		return err
	}
	prev, err := s.Store.MessageBefore(ctx, m.ThreadID, n)
	if err != nil || prev == nil {
		return err
	}
	e := &store.Edge{ID: fmt.Sprintf("edg_%s", m.MessageID), ThreadID: m.ThreadID, From: n.ID, To: prev.ID, Type: EdgeRepliesTo,
		AuthorID: m.FromObjectID, AuthorHash: m.FromHash, MessageID: m.MessageID, CreatedAt: at}
	return s.Store.AddEdge(ctx, e)
}
