// Package consumers declares what webhook-svc consumes: every domain topic, read by one consumer
// group whose partitions (keyed by object id) spread the work over the replicas.
package consumers

import (
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/service"
	"github.com/svcdev/svc/webhook-svc/internal/webhook"
)

// Group is the consumer group of the deliveries.
const Group = "deliveries"

// Topics are the domain topics whose events may become webhook events.
var Topics = []string{
	events.TopicIdentity, events.TopicContext, events.TopicMailbox, events.TopicGraph, events.TopicClaims, events.TopicFeed,
}

// Register starts the consumer that fans events out to subscriptions. A delivery's id is derived
// from the event and the subscription, so a redelivered event inserts nothing new: no dedupe
// record is needed.
func Register(b *service.Base, f *webhook.Fanout) {
	b.ConsumeBatches(Group, Topics, f.Handle)
}
