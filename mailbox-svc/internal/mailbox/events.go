package mailbox

import (
	"time"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/identity"
)

// This file builds every event mailbox-svc publishes. A use case stages the events of a write in
// the Outbox before the insert that records their ids (events.EventsField), and confirms them once
// that insert succeeded.

// Outbox stages and relays the events of writes (events.Outbox).
type Outbox interface {
	events.Stager
	Confirm(evs ...events.Pending)
}

// sendEvents are the events of a send, recorded by the message's own insert: thread.created when
// it opens thread t (nil: it continues one), then message.created. Both belong to the recipient.
func sendEvents(requestID string, from, to *identity.Object, t *store.Thread, m *store.Message) ([]events.Pending, error) {
	var out []events.Pending
	if t != nil {
		ev, err := events.New(events.TopicMailbox, events.ThreadCreated, to.ObjectID, to.Hash, requestID,
			contract.ThreadCreatedData{
				ThreadID: t.ID, ParticipantAdmission: t.Admission, CreatedAt: clock.Format(t.CreatedAt),
				Participants: []contract.Participant{{ObjectID: from.ObjectID, Hash: from.Hash}, {ObjectID: to.ObjectID, Hash: to.Hash}},
			})
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	ev, err := events.New(events.TopicMailbox, events.MessageCreated, to.ObjectID, to.Hash, requestID,
		contract.MessageCreatedData{
			MessageID: m.ID, ThreadID: m.ThreadID, FromObjectID: m.FromID, FromHash: from.Hash,
			ToObjectID: m.ToID, ToHash: to.Hash, Kind: m.Kind, Body: m.Body, CreatedAt: clock.Format(m.CreatedAt),
			PrevMessageID: m.Prev,
		})
	if err != nil {
		return nil, err
	}
	return append(out, ev), nil
}

// blockEvent is sender.blocked or sender.unblocked (eventType), owned by the blocking object.
func blockEvent(eventType, requestID string, owner Owner, sender *identity.Object, at time.Time, version int64) events.Pending {
	return events.MustNew(events.TopicMailbox, eventType, owner.ObjectID, owner.Hash, requestID,
		contract.SenderBlockData{SenderObjectID: sender.ObjectID, SenderHash: sender.Hash, At: clock.Format(at), ControlVersion: version})
}
