// Package consumers holds what graph-svc consumes: mailbox-svc's message.created, which makes
// every message a node of its thread's graph and tells graph-svc who takes part in the thread,
// its sender.blocked and sender.unblocked, which keep the blocks a graph write honours, and
// identity-svc's object.hash_changed, which keeps the hashes a graph read shows current.
package consumers

import (
	"context"
	"fmt"
	"time"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/controls"
	"github.com/svcdev/svc/pkg/events"
)

// Group is the consumer group of the mailbox projection; HashGroup that of the hashes.
const (
	Group     = "messages"
	HashGroup = "hashes"
)

// Topics are the topics of the mailbox projection; HashTopics those of the hashes.
var (
	Topics     = []string{events.TopicMailbox}
	HashTopics = []string{events.TopicIdentity}
)

// Messages projects messages into their threads' graphs and keeps the sender blocks.
type Messages struct {
	Graph *graph.Service
	// Controls records the block control version the projection has applied (pkg/controls),
	// which a graph write compares with the blocker's latest; nil records nothing.
	Controls AppliedVersions
	// Service is the name the applied versions are recorded under.
	Service string
}

// AppliedVersions records the control versions a projection has applied (controls.Versions).
type AppliedVersions interface {
	Applied(ctx context.Context, service, kind, objectID string, version int64) error
}

// Handle projects a batch of events (an events.BatchHandler); it is idempotent. The events of a
// batch are applied in their order: the messages gathered so far are written before a block
// event, so a block never overtakes what came before it.
func (m *Messages) Handle(ctx context.Context, evs []events.Event) error {
	var msgs []contract.MessageCreatedData
	for _, ev := range evs {
		switch ev.Type {
		case events.MessageCreated:
			var d contract.MessageCreatedData
			if err := ev.Decode(&d); err != nil || d.MessageID == "" || d.ThreadID == "" || d.FromObjectID == "" || d.ToObjectID == "" {
				return events.Permanent(fmt.Errorf("malformed %s event (%v)", ev.Type, err)) // retrying cannot help
			}
			msgs = append(msgs, d)
		case events.SenderBlocked, events.SenderUnblocked:
			var d contract.SenderBlockData
			if err := ev.Decode(&d); err != nil || d.SenderObjectID == "" || ev.ObjectID == "" {
				return events.Permanent(fmt.Errorf("malformed %s event (%v)", ev.Type, err))
			}
			if err := m.Graph.ProjectMessages(ctx, msgs); err != nil {
				return err
			}
			msgs = nil
			at, err := time.Parse(clock.Layout, d.At)
			if err != nil {
				at = clock.Now()
			}
			if err := m.Graph.ProjectBlock(ctx, ev.ObjectID, d.SenderObjectID, ev.Type == events.SenderBlocked, at); err != nil {
				return err
			}
			if m.Controls != nil {
				if err := m.Controls.Applied(ctx, m.Service, controls.Blocks, ev.ObjectID, d.ControlVersion); err != nil {
					return err
				}
			}
		}
	}
	return m.Graph.ProjectMessages(ctx, msgs)
}

// Hashes keeps the current hashes of objects from identity-svc's events.
type Hashes struct{ Graph *graph.Service }

// Handle implements events.Handler; it is idempotent.
func (h *Hashes) Handle(ctx context.Context, ev events.Event) error {
	if ev.Type != events.ObjectHashChanged {
		return nil
	}
	var d contract.HashChangedData
	if err := ev.Decode(&d); err != nil || d.Hash == "" || ev.ObjectID == "" {
		return events.Permanent(fmt.Errorf("malformed %s event (%v)", ev.Type, err))
	}
	return h.Graph.ProjectHash(ctx, ev.ObjectID, d.Hash)
}
