package store

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/svcdev/svc/pkg/mongox"
)

// preloadWorkers bounds the lists PreloadThreads writes at once.
const preloadWorkers = 16

// PreloadThreads stores threads that are not stored yet, with their messages (msgs[i] are the
// messages of threads[i], oldest first; the threads in order of their latest activity), and
// everything the sends and the lists projection would have written for them: each message linked
// to the one before and in its thread's lists, each thread at its place in its participants'
// mailboxes with its counts. It writes in bulk (mongox.AppendMany, one insert per list; the
// messages, threads and mailbox places in one insert each), for loading a store quickly (the
// data-scale benchmark); the service itself never calls it, and nothing else may write these
// threads or mailboxes meanwhile.
func (s *Store) PreloadThreads(ctx context.Context, threads []Thread, msgs [][]Message) error {
	if len(threads) == 0 {
		return nil
	}
	var all []Message
	firsts := make([]int64, len(threads))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(preloadWorkers)
	for i := range threads {
		t, ms := &threads[i], msgs[i]
		var entries []MessageEntry
		var inbound []Mark
		for j := range ms {
			m := &ms[j]
			if j > 0 {
				m.Prev = ms[j-1].ID
			}
			m.Seq = int64(j + 1) // the thread's lists are new
			entries = append(entries, MessageEntry{ID: m.ID, FromID: m.FromID, ToID: m.ToID, Kind: m.Kind, Body: m.Body, CreatedAt: m.CreatedAt, Signature: m.Signature})
			if m.ToID == t.Participants[0] && m.FromID != m.ToID {
				inbound = append(inbound, Mark{})
			}
		}
		if len(ms) > 0 {
			last := ms[len(ms)-1]
			t.LastMessageID, t.LastMessageAt = last.ID, last.CreatedAt
		}
		firsts[i] = int64(len(inbound))
		all = append(all, ms...)
		g.Go(func() error {
			if err := mongox.AppendMany(gctx, s.lists, ThreadList(t.ID), entries); err != nil {
				return err
			}
			return mongox.AppendMany(gctx, s.lists, InboundList(t.ID), inbound)
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("preload thread lists: %w", err)
	}
	if _, err := mongox.InsertNew(ctx, s.messages, all); err != nil {
		return fmt.Errorf("preload messages: %w", err)
	}
	if _, err := mongox.InsertNew(ctx, s.threads, threads); err != nil {
		return fmt.Errorf("preload threads: %w", err)
	}

	// Each participant's mailbox takes its threads in order, appended by one writer.
	boxes := map[string][]int{}
	var objects []string
	for i, t := range threads {
		for j, id := range t.Participants {
			if j > 0 && id == t.Participants[0] {
				break
			}
			if _, ok := boxes[id]; !ok {
				objects = append(objects, id)
			}
			boxes[id] = append(boxes[id], i)
		}
	}
	places := make([][]BoxThread, len(objects))
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(preloadWorkers)
	for k, objectID := range objects {
		g.Go(func() error {
			n, err := s.lists.Len(gctx, BoxList(objectID))
			if err != nil {
				return err
			}
			entries := make([]BoxEntry, len(boxes[objectID]))
			for j, i := range boxes[objectID] {
				t := &threads[i]
				entries[j] = BoxEntry{ThreadID: t.ID}
				messages := int64(len(msgs[i]))
				places[k] = append(places[k], BoxThread{ID: BoxThreadID(objectID, t.ID), ObjectID: objectID, ThreadID: t.ID,
					Pos: n + 1 + int64(j), Messages: messages, Inbound: inbound(t.Participants, objectID, messages, firsts[i])})
			}
			return mongox.AppendMany(gctx, s.lists, BoxList(objectID), entries)
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("preload mailboxes: %w", err)
	}
	var docs []BoxThread
	for _, p := range places {
		docs = append(docs, p...)
	}
	if _, err := mongox.InsertNew(ctx, s.boxThreads, docs); err != nil {
		return fmt.Errorf("preload mailbox places: %w", err)
	}
	return nil
}
