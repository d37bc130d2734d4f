// Package preload grows the stores of the services for the benchmarks that measure reads at a
// given size (deploy/e2e's scale benchmarks, deploy/benchstack), in bulk: it inserts the
// documents the services' writes would have left, in the layouts their stores document
// (docs/architecture.md), so that no service carries code only a benchmark runs.
package preload

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
)

// Kinds of webhook-svc subscription.
const (
	SubscriptionWebhook = "webhook" // an owner's webhook on its own object
	SubscriptionContext = "context" // a context subscription of CreatorID to the box ObjectID
)

// Subscription is a subscription for Subscriptions: an owner's webhook on ObjectID (CreatorID is
// ObjectID) or a context subscription of CreatorID to the box ObjectID.
type Subscription struct {
	Kind, ObjectID, CreatorID, CreatorHash, CallbackURL string
}

// webhookQuotas are webhook-svc's default quotas (WEBHOOK_MAX_*), by the scope of their places.
func webhookQuotas(s Subscription) map[string]int {
	if s.Kind == SubscriptionWebhook {
		return map[string]int{"webhooks:" + s.ObjectID: 25}
	}
	return map[string]int{"watcher:" + s.CreatorID + ":box:" + s.ObjectID: 10, "box:" + s.ObjectID: 100, "watcher:" + s.CreatorID: 100}
}

// Subscriptions stores subscriptions in webhook-svc's database db as creates store them
// (webhook-svc's "Quotas" and "An object's subscriptions are a range"): the subscription with
// every event it may select and a secret, a place in each of its quotas, and its entry in its
// object's list, in three inserts. Every quota scope the subscriptions fill must be new, filled
// by one call, within the default quotas.
func Subscriptions(ctx context.Context, db *mongo.Database, subs []Subscription) error {
	var docs, places, listed []any
	taken := map[string]int{}
	now := clock.Now()
	for _, s := range subs {
		id, evs := apikey.NewID("whk"), []string{events.WebhookIdentifier, events.WebhookClaimVerified, events.WebhookContextSource,
			events.WebhookContextUpdated, events.WebhookMessage, events.WebhookDecision}
		if s.Kind == SubscriptionContext {
			id, evs = apikey.NewID("csub"), []string{events.WebhookContextUpdated}
		}
		var held []string
		for scope, limit := range webhookQuotas(s) {
			taken[scope]++
			if taken[scope] > limit {
				return fmt.Errorf("preload: scope %s past its quota of %d", scope, limit)
			}
			place := fmt.Sprintf("%s#%d", scope, taken[scope])
			held = append(held, place)
			places = append(places, bson.D{{Key: "_id", Value: place}, {Key: "subscription_id", Value: id}, {Key: "at", Value: now}})
		}
		docs = append(docs, bson.D{{Key: "_id", Value: id}, {Key: "kind", Value: s.Kind}, {Key: "object_id", Value: s.ObjectID},
			{Key: "creator_id", Value: s.CreatorID}, {Key: "holder_hash", Value: s.CreatorHash}, {Key: "callback_url", Value: s.CallbackURL},
			{Key: "events", Value: evs}, {Key: "secrets", Value: bson.A{bson.D{{Key: "value", Value: secret()}, {Key: "created_at", Value: now}}}},
			{Key: "created_at", Value: now}, {Key: "updated_at", Value: now}, {Key: "slots", Value: held}})
		listed = append(listed, bson.D{{Key: "_id", Value: s.ObjectID + "|" + s.Kind + "|" + id}, {Key: "subscription_id", Value: id}})
	}
	return insertAll(ctx, db, map[string][]any{"slots": places, "subscriptions": docs, "subscription_lists": listed})
}

// secret is a signing secret as webhook-svc makes them.
func secret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// insertBatch is how many documents one insert of a preload carries.
const insertBatch = 1000

// insertAll inserts the documents of each collection in unordered batches; a document already
// there (an object's hash record, named by several threads) is left as it is.
func insertAll(ctx context.Context, db *mongo.Database, docs map[string][]any) error {
	for coll, ds := range docs {
		for start := 0; start < len(ds); start += insertBatch {
			if _, err := mongox.InsertNew(ctx, db.Collection(coll), ds[start:min(start+insertBatch, len(ds))]); err != nil {
				return fmt.Errorf("preload %s: %w", coll, err)
			}
		}
	}
	return nil
}
