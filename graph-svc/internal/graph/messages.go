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
// before it. It also records the thread's participants. Every step is keyed by the message, so
// repeating it changes nothing.
//
// Messages of one thread may be projected out of order (each is keyed by its recipient, so the
// two sides' messages travel in different partitions). Edges are never rewritten: a message
// projected late inserts the edges that join it to its neighbours, and a read keeps, of a
// message's projected replies_to edges, the one to the newest message (see repliesTo).
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
	prev, next, err := s.Store.MessageNeighbours(ctx, m.ThreadID, n)
	if err != nil {
		return err
	}
	for _, pair := range [][2]*store.Node{{n, prev}, {next, n}} {
		from, to := pair[0], pair[1]
		if from == nil || to == nil {
			continue
		}
		e := &store.Edge{ID: fmt.Sprintf("edg_%s_%s", from.MessageID, to.MessageID), ThreadID: m.ThreadID, From: from.ID, To: to.ID,
			Type: EdgeRepliesTo, AuthorID: from.AuthorID, AuthorHash: from.AuthorHash, MessageID: from.MessageID, CreatedAt: from.CreatedAt}
		if err := s.Store.AddEdge(ctx, e); err != nil {
			return err
		}
	}
	return nil
}
