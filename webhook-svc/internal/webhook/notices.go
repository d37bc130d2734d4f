package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// Notifier stages the events that tell a subscription's holder of trouble, with the write that
// records the trouble (events.Outbox): mailbox-svc consumes them and leaves a system message in
// the holder's mailbox, so webhook-svc never calls mailbox-svc.
type Notifier interface {
	Stage(ctx context.Context, collection string, id any, evs ...events.Pending) error
	Confirm(evs ...events.Pending)
}

// notice builds the event of a subscription's trouble, or false when the subscription names no
// mailbox to tell (made before subscriptions kept their holder's hash) or none is wanted. key
// names the one event of the trouble: writers that record it more than once stage one event.
func (s *Sender) notice(sub *store.Subscription, eventType, key string, d contract.WebhookNoticeData) (events.Pending, bool) {
	if s.Notices == nil || sub.HolderHash == "" {
		return events.Pending{}, false
	}
	d.SubscriptionID, d.Kind = sub.ID, sub.Kind
	return events.MustNewOnce(key, events.TopicWebhook, eventType, sub.CreatorID, sub.HolderHash, "", d), true
}

// disabledNotice is the event of a subscription the sender has just disabled.
func (s *Sender) disabledNotice(sub *store.Subscription, h *store.SubscriptionHealth) (events.Pending, bool) {
	again := `Enable it again with PATCH {"enabled": true} once the endpoint answers.`
	if sub.Kind == store.KindContext {
		again = "Subscribe again once the endpoint answers."
	}
	return s.notice(sub, events.WebhookDisabled, fmt.Sprintf("webhook-disabled:%s:%d", sub.ID, h.DisabledAt.UnixMilli()),
		contract.WebhookNoticeData{Reason: h.DisabledReason, Message: fmt.Sprintf("Your %s %s was disabled: %s. %s",
			sub.Kind, sub.ID, h.DisabledReason, again)})
}

// givenUpNotice is the event of a delivery given up after its retries. One a day per
// subscription is enough to tell the holder, whatever the number of deliveries given up.
func (s *Sender) givenUpNotice(sub *store.Subscription, d *store.Delivery, now time.Time) (events.Pending, bool) {
	return s.notice(sub, events.WebhookDeliveryGivenUp, fmt.Sprintf("webhook-given-up:%s:%s", sub.ID, now.Format(time.DateOnly)),
		contract.WebhookNoticeData{Reason: "the endpoint kept failing", DeliveryID: d.ID, EventID: d.EventID, Event: d.Event,
			Attempts: len(d.Attempts), Message: fmt.Sprintf(
				"A delivery to your %s %s (event %s, %s) was given up after %d attempts. "+
					"POST /api/objects/{hash}/webhooks/%s/recover {\"since\": …} sends the failed deliveries again.",
				sub.Kind, sub.ID, d.Event, d.EventID, len(d.Attempts), sub.ID)})
}
