// Package store is webhook-svc's MongoDB repository: subscriptions, their health, deliveries, the
// schedule of pending deliveries, the delivery logs and the attempt claims by which replicas share
// the delivery work.
//
// FerretDB applies an update as read-document-then-write-document with no isolation, so a
// document is only ever rewritten by one writer at a time: a subscription by its owner's requests,
// a delivery by the replica holding the claim of its next attempt (an insert with a unique _id,
// which holds on every backend), a health record by the replica that just made an attempt. Schedule
// entries and log lines (schedule.go, attempts.go) are inserted and deleted, never rewritten.
package store

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/mongox"
)

// Collection names.
const (
	Subscriptions = "subscriptions"
	Health        = "health"
	Deliveries    = "deliveries"
	// AttemptClaims holds the claims of attempts (claims.go).
	AttemptClaims = "attempt_claims"
	// Schedule holds when to look at each pending delivery and when each delivery was made
	// (schedule.go).
	Schedule   = "schedule"
	Migrations = "migrations"
	// Slots are the places of the quotas (slots.go).
	Slots = "slots"
	// Lists holds each object's subscriptions under <object>|<kind>|<subscription id>
	// (lists.go): the owner's webhooks, the context subscriptions to its box.
	Lists = "subscription_lists"
	// Attempts holds the delivery logs: each subscription's attempts and outcomes (attempts.go).
	Attempts = "attempts"
	// Objects is the projection of objects' visibility (objects.go).
	Objects = "objects"
)

// Indexes create the collections at start-up, as FerretDB wants. Every query below is served by
// _id.
var Indexes = []mongox.Index{
	{Collection: Subscriptions, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Health, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Deliveries, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: AttemptClaims, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Schedule, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Migrations, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Slots, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Lists, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Attempts, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Objects, Keys: bson.D{{Key: "_id", Value: 1}}},
}

// Store is the repository.
type Store struct{ db *mongo.Database }

// New returns a store over db.
func New(db *mongo.Database) *Store { return &Store{db: db} }

func (s *Store) c(name string) *mongo.Collection { return s.db.Collection(name) }

// replace rewrites the document with doc's _id, inserting it when absent.
func (s *Store) replace(ctx context.Context, coll, id string, doc any) error {
	if err := mongox.ReplaceUpsert(ctx, s.c(coll), id, doc); err != nil {
		return fmt.Errorf("store %s: %w", coll, err)
	}
	return nil
}
