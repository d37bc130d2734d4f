package graph

import (
	"context"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
)

// MessageNodeID is the id of the node of a message: derived from the message, so that a
// redelivered message.created projects nothing new.
func MessageNodeID(messageID string) string { return "nod_" + messageID }

// MessageStore writes the message projection's batches.
type MessageStore interface {
	AddThreads(ctx context.Context, ts []store.Thread) error
	AddNodes(ctx context.Context, ns []store.Node) ([]bool, error)
	StoredNodes(ctx context.Context, ids []string) (map[string]bool, error)
	AppendMessages(ctx context.Context, threadID string, ms []store.MessageRef) ([]int64, error)
	AppendGraphItems(ctx context.Context, threadID string, items []store.GraphItem) error
}

// ProjectMessages makes messages of mailbox-svc message nodes of their threads' graphs, each
// authored by its sender and visible to both participants, and records the threads'
// participants (the threads this process has not recorded yet, in one insert) and the hashes the
// messages name. A message's node is appended to its thread's msgs and graph lists, then stored:
// a redelivered message whose node is stored changes nothing. (A crash between the appends and
// the store appends it again on redelivery; a page shows such a node once.)
//
// A message's replies_to edge goes to the thread's message before it, which its event names
// (PrevMessageID): the node records it, and a read lists the edge with the node. Events of
// releases that did not name it leave the read to derive it from the msgs list (see
// messageChain), since messages of one thread may be projected out of order (each is keyed by
// its recipient, so the two sides' messages travel in different partitions).
func (s *Service) ProjectMessages(ctx context.Context, msgs []contract.MessageCreatedData) error {
	var threads []store.Thread
	seen := map[string]bool{}
	for _, m := range msgs {
		if !seen[m.ThreadID] && !s.knownThread(m.ThreadID) {
			seen[m.ThreadID] = true
			threads = append(threads, store.Thread{ID: m.ThreadID, Participants: []string{m.FromObjectID, m.ToObjectID},
				CreatedAt: parseTime(m.CreatedAt)})
		}
	}
	if err := s.Store.AddThreads(ctx, threads); err != nil {
		return err
	}
	for _, t := range threads {
		s.rememberThread(t.ID)
	}
	if err := s.rememberHashes(ctx, msgs); err != nil {
		return err
	}
	nodes, parts, err := s.newMessageNodes(ctx, msgs)
	if err != nil {
		return err
	}
	if err := s.appendMessages(ctx, nodes); err != nil {
		return err
	}
	if err := s.indexNodes(ctx, nodes, parts); err != nil {
		return err
	}
	stored := make([]store.Node, len(nodes))
	senders := make([][2]string, len(nodes))
	for i, n := range nodes {
		stored[i], senders[i] = *n, [2]string{n.ThreadID, n.AuthorID}
	}
	if err := s.markTookPart(ctx, senders...); err != nil {
		return err
	}
	_, err = s.Store.AddNodes(ctx, stored)
	return err
}

// newMessageNodes are the nodes of msgs not stored yet (those projected before are left out, as
// is a message twice in one batch), with each one's participants: one read for the batch.
func (s *Service) newMessageNodes(ctx context.Context, msgs []contract.MessageCreatedData) ([]*store.Node, [][]string, error) {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = MessageNodeID(m.MessageID)
	}
	stored, err := s.Store.StoredNodes(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	var nodes []*store.Node
	var parts [][]string
	for _, m := range msgs {
		id := MessageNodeID(m.MessageID)
		if stored[id] {
			continue
		}
		stored[id] = true
		n := &store.Node{ID: id, ThreadID: m.ThreadID, Type: TypeMessage, Body: m.Body,
			Visibility: Participants, AuthorID: m.FromObjectID, AuthorHash: m.FromHash, MessageID: m.MessageID,
			CreatedAt: parseTime(m.CreatedAt)}
		if m.PrevMessageID != "" {
			n.PrevNodeID = MessageNodeID(m.PrevMessageID)
		}
		nodes, parts = append(nodes, n), append(parts, []string{m.FromObjectID, m.ToObjectID})
	}
	return nodes, parts, nil
}

// appendMessages numbers new message nodes in their threads' messages (per thread one read and
// one insert) and adds them to their threads' graphs. The caller indexes and stores them.
func (s *Service) appendMessages(ctx context.Context, nodes []*store.Node) error {
	byThread := map[string][]*store.Node{}
	var order []string
	for _, n := range nodes {
		if byThread[n.ThreadID] == nil {
			order = append(order, n.ThreadID)
		}
		byThread[n.ThreadID] = append(byThread[n.ThreadID], n)
	}
	for _, th := range order {
		ns := byThread[th]
		refs := make([]store.MessageRef, len(ns))
		for i, n := range ns {
			refs[i] = store.MessageRef{NodeID: n.ID, CreatedAt: n.CreatedAt}
		}
		seqs, err := s.Store.AppendMessages(ctx, th, refs)
		if err != nil {
			return err
		}
		items := make([]store.GraphItem, len(ns))
		for i, n := range ns {
			items[i] = store.GraphItem{Node: n, MsgSeq: seqs[i]}
		}
		if err := s.Store.AppendGraphItems(ctx, th, items); err != nil {
			return err
		}
	}
	return nil
}
