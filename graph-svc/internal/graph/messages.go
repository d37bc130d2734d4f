package graph

import (
	"context"
	"errors"
	"slices"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
)

// MessageNodeID is the id of the node of a message: derived from the message, so that a
// redelivered message.created projects nothing new.
func MessageNodeID(messageID string) string { return "nod_" + messageID }

// MessageStore writes the message projection's batches.
type MessageStore interface {
	RecordThreads(ctx context.Context, ts []store.Thread) ([]bool, error)
	AddNodes(ctx context.Context, ns []store.Node) ([]bool, error)
	StoredNodes(ctx context.Context, ids []string) (map[string]int64, error)
	AppendMessages(ctx context.Context, batch []store.ThreadMessages) ([][]int64, error)
}

// ProjectMessages makes messages of mailbox-svc message nodes of their threads' graphs, each
// authored by its sender and visible to both participants, and records the threads'
// participants (the threads this process has not recorded yet, in one insert; their thread
// lists' entries go with the messages' list entries) and the hashes the messages name. A
// message's node is appended to its thread's msgs and graph lists, then stored: a redelivered
// message whose node is stored changes nothing. (A crash between the appends and the store
// appends it again on redelivery; a page shows such a node once.) Every step writes the whole
// batch at once, whatever threads and objects it touches: a batch of a hundred messages in a
// hundred threads costs the commands of one.
//
// A message's replies_to edge goes to the thread's message before it, which its event names
// (PrevMessageID): the node records it, and a read lists the edge with the node. Events of
// releases that did not name it leave the read to derive it from the msgs list (see
// messageChain), since messages of one thread may be projected out of order (each is keyed by
// its recipient, so the two sides' messages travel in different partitions).
//
// Batches handed in at once (one per partition the consumer reads) are projected together: while
// one projection runs, the batches that arrive wait, and the first of them to take the next turn
// projects them all in one go. Every batch costs the same few commands whatever it holds, so under
// load the partitions share them instead of each paying them for a handful of messages. A batch's
// messages stay in their order; batches of different partitions had none to keep. Should a
// projection of several batches fail, each is projected again alone, so that a failing message
// fails its own batch only, as the consumer expects.
func (s *Service) ProjectMessages(ctx context.Context, msgs []contract.MessageCreatedData) error {
	if len(msgs) == 0 {
		return nil
	}
	s.knownOnce.Do(s.initKnown)
	p := &pendingProjection{msgs: msgs, done: make(chan struct{})}
	s.pendingMu.Lock()
	s.pending = append(s.pending, p)
	s.pendingMu.Unlock()
	select {
	case <-p.done: // projected by another caller's turn
	case <-ctx.Done():
		return ctx.Err() // still queued: a later turn may project it too, harmlessly
	case s.projecting <- struct{}{}:
		s.projectPending(ctx, p)
		<-s.projecting
	}
	if !errors.Is(p.err, errProjectAlone) {
		return p.err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case s.projecting <- struct{}{}:
	}
	defer func() { <-s.projecting }()
	return s.projectMessages(ctx, msgs)
}

// errProjectAlone tells the callers of a failed projection of several batches to project their
// own batch alone.
var errProjectAlone = errors.New("project the batch alone")

// projectPending projects the batches waiting, p among them unless another turn projected it,
// in one go; the caller holds the turn.
func (s *Service) projectPending(ctx context.Context, p *pendingProjection) {
	select {
	case <-p.done:
		return
	default:
	}
	s.pendingMu.Lock()
	batches := s.pending
	s.pending = nil
	s.pendingMu.Unlock()
	var all []contract.MessageCreatedData
	for _, b := range batches {
		all = append(all, b.msgs...)
	}
	err := s.projectMessages(ctx, all)
	if err != nil && len(batches) > 1 {
		err = errProjectAlone
	}
	for _, b := range batches {
		b.err = err
		close(b.done)
	}
}

// pendingProjection is a batch of messages waiting for its turn to be projected.
type pendingProjection struct {
	msgs []contract.MessageCreatedData
	done chan struct{} // closed once projected, err its result
	err  error
}

// projectMessages projects one batch of messages (see ProjectMessages, which made the caches).
func (s *Service) projectMessages(ctx context.Context, msgs []contract.MessageCreatedData) error {
	var threads []store.Thread
	seen := map[string]bool{}
	for _, m := range msgs {
		if !seen[m.ThreadID] && !s.known.Contains(m.ThreadID) {
			seen[m.ThreadID] = true
			threads = append(threads, store.Thread{ID: m.ThreadID, Participants: []string{m.FromObjectID, m.ToObjectID},
				CreatedAt: parseTime(m.CreatedAt)})
		}
	}
	added, err := s.Store.RecordThreads(ctx, threads)
	if err != nil {
		return err
	}
	// The threads this process had not recorded are listed in their participants' thread lists
	// with their messages (again, harmlessly, after a restart); those recorded now have no
	// messages yet.
	unlisted, fresh := map[string]*store.Thread{}, map[string]bool{}
	for i := range threads {
		unlisted[threads[i].ID], fresh[threads[i].ID] = &threads[i], added[i]
		if added[i] {
			s.threads.Add(threads[i].ID, threads[i])
		}
	}
	if err := s.rememberHashes(ctx, msgs); err != nil {
		return err
	}
	nodes, parts, seqs, err := s.newMessageNodes(ctx, msgs, fresh)
	if err != nil {
		return err
	}
	if err := s.appendMessages(ctx, nodes, seqs, fresh, unlisted); err != nil {
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
	if _, err = s.Store.AddNodes(ctx, stored); err != nil {
		return err
	}
	for _, t := range threads {
		s.known.Add(t.ID, struct{}{})
	}
	return nil
}

// newMessageNodes are the nodes of msgs not stored yet (those projected before are left out, as
// is a message twice in one batch), with each one's participants, and the positions in their
// threads' messages of the stored nodes of the messages they follow: one read for the batch, or
// none when every message is of a thread recorded by this batch (fresh: nothing of it was
// projected before, as the thread is recorded first).
func (s *Service) newMessageNodes(ctx context.Context, msgs []contract.MessageCreatedData, fresh map[string]bool) ([]*store.Node, [][]string, map[string]int64, error) {
	ids := make([]string, 0, 2*len(msgs))
	for _, m := range msgs {
		if fresh[m.ThreadID] {
			continue
		}
		ids = append(ids, MessageNodeID(m.MessageID))
		if m.PrevMessageID != "" {
			ids = append(ids, MessageNodeID(m.PrevMessageID))
		}
	}
	slices.Sort(ids)
	stored, err := s.Store.StoredNodes(ctx, slices.Compact(ids))
	if err != nil {
		return nil, nil, nil, err
	}
	var nodes []*store.Node
	var parts [][]string
	batch := map[string]bool{}
	for _, m := range msgs {
		id := MessageNodeID(m.MessageID)
		if _, ok := stored[id]; ok || batch[id] {
			continue
		}
		batch[id] = true
		n := &store.Node{ID: id, ThreadID: m.ThreadID, Type: TypeMessage, Body: m.Body,
			Visibility: Participants, AuthorID: m.FromObjectID, AuthorHash: m.FromHash, MessageID: m.MessageID,
			CreatedAt: parseTime(m.CreatedAt)}
		if m.PrevMessageID != "" {
			n.PrevNodeID = MessageNodeID(m.PrevMessageID)
		}
		nodes, parts = append(nodes, n), append(parts, []string{m.FromObjectID, m.ToObjectID})
	}
	return nodes, parts, stored, nil
}

// appendMessages numbers new message nodes in their threads' messages and adds them to their
// threads' graphs: one insert for the whole batch, whatever threads it touches, and per thread
// one read of the messages' last unless the thread's first in the batch takes the position after
// its previous message's (read with the batch's stored nodes) or is the first message of a thread
// recorded by this batch (fresh) or by a graph read that learned it from mailbox-svc before its
// projection. The same insert lists the threads this process had not recorded (unlisted) in their participants'
// thread lists. The caller indexes and stores them.
func (s *Service) appendMessages(ctx context.Context, nodes []*store.Node, stored map[string]int64, fresh map[string]bool,
	unlisted map[string]*store.Thread) error {
	at := map[string]int{}
	var batch []store.ThreadMessages
	for _, n := range nodes {
		i, ok := at[n.ThreadID]
		if !ok {
			i = len(batch)
			at[n.ThreadID] = i
			tm := store.ThreadMessages{ThreadID: n.ThreadID, Listed: unlisted[n.ThreadID]}
			switch { // 0: after the list's last, read
			case n.PrevNodeID == "" && (fresh[n.ThreadID] || s.learned.Contains(n.ThreadID)):
				// A thread's first message, in a thread recorded by this batch or by a read
				// that learned it from mailbox-svc: position 1, with no read. Should it be taken
				// (a reply projected first, or another replica's projection), the message is
				// renumbered after the list's last.
				tm.From = 1
			case n.PrevNodeID != "" && stored[n.PrevNodeID] > 0:
				tm.From = stored[n.PrevNodeID] + 1
			}
			batch = append(batch, tm)
		}
		batch[i].Refs = append(batch[i].Refs, store.MessageRef{NodeID: n.ID, CreatedAt: n.CreatedAt})
		batch[i].Nodes = append(batch[i].Nodes, n)
	}
	seqs, err := s.Store.AppendMessages(ctx, batch)
	if err != nil {
		return err
	}
	for i, tm := range batch {
		for j, n := range tm.Nodes {
			n.MsgSeq = seqs[i][j]
		}
	}
	return nil
}
