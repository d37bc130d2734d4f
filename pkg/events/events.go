// Package events holds the event envelope, the topic and type names (declared here once), the
// Kafka producer, the outbox relay and the consumer runner of svc.
package events

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
)

// Topics, one per publishing service. The message key is the object_id, so that the events of
// one object stay in order.
const (
	TopicIdentity = "svc.identity.v1"
	TopicContext  = "svc.context.v1"
	TopicMailbox  = "svc.mailbox.v1"
	TopicGraph    = "svc.graph.v1"
	TopicClaims   = "svc.claims.v1"
	TopicFeed     = "svc.feed.v1"
	TopicWebhook  = "svc.webhook.v1"
)

// Topics returns every topic name under prefix, for a broker that creates its topics explicitly.
func Topics(prefix string) []string {
	names := []string{TopicIdentity, TopicContext, TopicMailbox, TopicGraph, TopicClaims, TopicFeed, TopicWebhook}
	for i, t := range names {
		names[i] = prefix + t
	}
	return names
}

// Internal event types.
const (
	ObjectCreated     = "object.created"
	ObjectHashChanged = "object.hash_changed"
	KeyCreated        = "key.created"
	KeyRevoked        = "key.revoked"
	KeyRotated        = "key.rotated"
	ContextUpdated    = "context.updated"
	// ContextAdmission carries an object's current admission rules (ContextUpdatedData's version
	// and admission) to mailbox-svc's projection, once, for objects whose context changed before
	// context.updated carried them. It has no public event.
	ContextAdmission      = "context.admission"
	ContextSourceChanged  = "context.source_changed"
	DecisionMemoryUpdated = "decision_memory.updated"
	MessageCreated        = "message.created"
	ThreadCreated         = "thread.created"
	SenderBlocked         = "sender.blocked"
	SenderUnblocked       = "sender.unblocked"
	DecisionRecorded      = "decision.recorded"
	ClaimVerified         = "claim.verified"
	ClaimLapsed           = "claim.lapsed"
	FeedItemPublished     = "feed.item_published"
	AssociationCreated    = "association.created"
	AssociationDeleted    = "association.deleted"
	// WebhookDisabled and WebhookDeliveryGivenUp tell a subscription's holder of trouble
	// (mailbox-svc leaves a system message in its mailbox).
	WebhookDisabled        = "webhook.disabled"
	WebhookDeliveryGivenUp = "webhook.delivery_given_up"
)

// Public webhook event names (spec "Events").
const (
	WebhookIdentifier     = "identifier"
	WebhookClaimVerified  = "claim_verified"
	WebhookContextSource  = "context_source"
	WebhookContextUpdated = "context_updated"
	WebhookMessage        = "message"
	WebhookDecision       = "decision"
)

// WebhookEvent maps an internal type to its public webhook event, or "" when it has none.
func WebhookEvent(eventType string) string {
	switch eventType {
	case ObjectCreated, ObjectHashChanged:
		return WebhookIdentifier
	case ClaimVerified:
		return WebhookClaimVerified
	case ContextSourceChanged:
		return WebhookContextSource
	case ContextUpdated, FeedItemPublished:
		return WebhookContextUpdated
	case MessageCreated:
		return WebhookMessage
	case DecisionRecorded:
		return WebhookDecision
	}
	return ""
}

// Event is the envelope every service publishes. Its id is the idempotency key of consumers.
// Payloads never carry keys, webhook header values or private guidance.
type Event struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	ObjectID  string          `json:"object_id"`
	Hash      string          `json:"hash"`
	Time      string          `json:"time"`
	RequestID string          `json:"request_id,omitempty"`
	Data      json.RawMessage `json:"data"`
}

// Decode unmarshals the event's data into dst.
func (e *Event) Decode(dst any) error {
	if err := json.Unmarshal(e.Data, dst); err != nil {
		return fmt.Errorf("decode %s data: %w", e.Type, err)
	}
	return nil
}

// Pending is an event built by a write, on its way to Kafka through the Outbox.
// A write that may be resumed later (an idempotent send) can store it.
type Pending struct {
	ID        string    `bson:"id"`
	Topic     string    `bson:"topic"`
	Key       string    `bson:"key"`
	Type      string    `bson:"type"`
	RequestID string    `bson:"request_id,omitempty"`
	Payload   string    `bson:"payload"`
	CreatedAt time.Time `bson:"created_at"`
}

// New builds a pending event for topic (without the deployment's topic prefix).
func New(topic, eventType, objectID, hash, requestID string, data any) (Pending, error) {
	return newEvent(apikey.NewID("evt"), topic, eventType, objectID, hash, requestID, data)
}

// OnceID is the id of the one event of a change that writers may record concurrently, named by
// key: each stages and confirms the same id, so the outbox keeps one entry and consumers handle
// it once.
func OnceID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "evt_" + hex.EncodeToString(sum[:16])
}

// MustNewOnce is MustNew with the id OnceID(key).
func MustNewOnce(key, topic, eventType, objectID, hash, requestID string, data any) Pending {
	return must(newEvent(OnceID(key), topic, eventType, objectID, hash, requestID, data))
}

func newEvent(id, topic, eventType, objectID, hash, requestID string, data any) (Pending, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return Pending{}, fmt.Errorf("encode %s data: %w", eventType, err)
	}
	now := clock.Now()
	ev := Event{
		ID: id, Type: eventType, ObjectID: objectID, Hash: hash,
		Time: clock.Format(now), RequestID: requestID, Data: raw,
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return Pending{}, fmt.Errorf("encode %s envelope: %w", eventType, err)
	}
	return Pending{ID: ev.ID, Topic: topic, Key: objectID, Type: eventType, RequestID: requestID,
		Payload: string(payload), CreatedAt: now}, nil
}

// MustNew is New for data that always encodes (plain structs and maps).
func MustNew(topic, eventType, objectID, hash, requestID string, data any) Pending {
	return must(New(topic, eventType, objectID, hash, requestID, data))
}

func must(p Pending, err error) Pending {
	if err != nil {
		panic(err)
	}
	return p
}
