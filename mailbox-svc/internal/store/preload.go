package store

import (
	"context"
	"fmt"

	"github.com/svcdev/svc/pkg/mongox"
)

// PreloadThread stores a thread and its messages (oldest first, none stored yet) with everything
// the sends and the projection would have written for them: each message linked to the one
// before, in the thread's lists, and the thread at the front of its participants' mailboxes. It
// writes the messages in one insert and the mailboxes once per thread, for loading a store
// quickly (the data-scale benchmark); the service itself never calls it.
func (s *Store) PreloadThread(ctx context.Context, t *Thread, msgs []Message) error {
	for i := range msgs {
		m := &msgs[i]
		if i > 0 {
			m.Prev = msgs[i-1].ID
		}
		if m.ToID == t.Participants[0] && m.FromID != m.ToID {
			if _, err := mongox.Append(ctx, s.lists, InboundList(t.ID), Mark{}); err != nil {
				return fmt.Errorf("preload %s: %w", t.ID, err)
			}
		}
		seq, err := mongox.Append(ctx, s.lists, ThreadList(t.ID),
			MessageEntry{ID: m.ID, FromID: m.FromID, ToID: m.ToID, Kind: m.Kind, Body: m.Body, CreatedAt: m.CreatedAt, Signature: m.Signature})
		if err != nil {
			return fmt.Errorf("preload %s: %w", t.ID, err)
		}
		m.Seq = seq
	}
	if len(msgs) > 0 {
		last := msgs[len(msgs)-1]
		t.LastMessageID, t.LastMessageAt = last.ID, last.CreatedAt
		if _, err := mongox.InsertNew(ctx, s.messages, msgs); err != nil {
			return fmt.Errorf("preload %s: %w", t.ID, err)
		}
	}
	if _, err := insertOnce(ctx, s.threads, t); err != nil {
		return fmt.Errorf("preload %s: %w", t.ID, err)
	}
	return s.ProjectMessage(ctx, t.ID)
}
