// Package consumers holds what graph-svc consumes: mailbox-svc's message.created, which makes
// every message a node of its thread's graph and tells graph-svc who takes part in the thread.
package consumers

import (
	"context"
	"fmt"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// Group is the consumer group of the projection.
const Group = "messages"

// Topics are the topics graph-svc consumes.
var Topics = []string{events.TopicMailbox}

// Messages projects messages into their threads' graphs.
type Messages struct{ Graph *graph.Service }

// Handle projects a batch of events (an events.BatchHandler); it is idempotent.
func (m *Messages) Handle(ctx context.Context, evs []events.Event) error {
	var msgs []contract.MessageCreatedData
	for _, ev := range evs {
		if ev.Type != events.MessageCreated {
			continue
		}
		var d contract.MessageCreatedData
		if err := ev.Decode(&d); err != nil || d.MessageID == "" || d.ThreadID == "" || d.FromObjectID == "" || d.ToObjectID == "" {
			return events.Permanent(fmt.Errorf("malformed %s event (%v)", ev.Type, err)) // retrying cannot help
		}
		msgs = append(msgs, d)
	}
	return m.Graph.ProjectMessages(ctx, msgs)
}
