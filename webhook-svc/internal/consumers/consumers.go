// Package consumers declares what webhook-svc consumes: every domain topic, read by one consumer
// group whose partitions (keyed by object id) spread the work over the replicas. The handler is
// webhook.Fanout; app registers it, as every service registers its consumers.
package consumers

import "github.com/svcdev/svc/pkg/events"

// Group is the consumer group of the deliveries.
const Group = "deliveries"

// Topics are the domain topics whose events may become webhook events.
var Topics = []string{
	events.TopicIdentity, events.TopicContext, events.TopicMailbox, events.TopicGraph, events.TopicClaims, events.TopicFeed,
}
