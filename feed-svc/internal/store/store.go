// Package store is feed-svc's MongoDB repository: feeds, their items and hidden marks (one file
// per collection), and the network projection built from other services' events.
//
// Every fact is an insert-only document with a natural _id (a feed by its box, an item, a hidden
// mark by its item, a projected event by its event id, a hash by its name), so that concurrent
// writers and redelivered events never lose or double anything on either backend: FerretDB
// applies an update as read-then-rewrite, so counters are counted from inserted documents.
package store

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/mongox"
)

// Collection names.
const (
	Feeds   = "feeds"
	Items   = "items"
	Hidden  = "hidden_items"
	Events  = "network_events"
	Objects = "network_objects"
	Hashes  = "network_hashes"
)

// Indexes are the indexes real MongoDB needs for the queries below; creating them also creates
// every collection at start-up.
var Indexes = []mongox.Index{
	{Collection: Feeds, Keys: bson.D{{Key: "created_at", Value: 1}}},
	{Collection: Items, Keys: bson.D{{Key: "feed_id", Value: 1}, {Key: "_id", Value: -1}}},
	{Collection: Hidden, Keys: bson.D{{Key: "feed_id", Value: 1}}},
	{Collection: Events, Keys: bson.D{{Key: "type", Value: 1}, {Key: "_id", Value: -1}}},
	{Collection: Events, Keys: bson.D{{Key: "object_id", Value: 1}, {Key: "at", Value: 1}}},
	{Collection: Objects, Keys: bson.D{{Key: "visibility", Value: 1}}},
	{Collection: Hashes, Keys: bson.D{{Key: "object_id", Value: 1}, {Key: "at", Value: 1}}},
}

// Store is the repository.
type Store struct{ db *mongo.Database }

// New returns a store over db.
func New(db *mongo.Database) *Store { return &Store{db: db} }

func (s *Store) c(name string) *mongo.Collection { return s.db.Collection(name) }
