package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// Event is one domain event of the network, projected: its _id is the event id, so a redelivered
// event is stored once. Feed item events keep the item's public fields; no other event keeps
// any content (a message event keeps neither its body nor its sender).
type Event struct {
	ID       string    `bson:"_id"`
	Type     string    `bson:"type"`
	ObjectID string    `bson:"object_id"`
	At       time.Time `bson:"at"`

	ItemID     string   `bson:"item_id,omitempty"`
	Title      string   `bson:"title,omitempty"`
	Body       string   `bson:"body,omitempty"`
	Tags       []string `bson:"tags,omitempty"`
	AuthorID   string   `bson:"author_id,omitempty"`
	AuthorHash string   `bson:"author_hash,omitempty"`
	AuthorName string   `bson:"author_name,omitempty"`
}

// Object is an object of the network as its creation event described it.
type Object struct {
	ID         string    `bson:"_id"`
	Hash       string    `bson:"hash"`
	Visibility string    `bson:"visibility"`
	Title      string    `bson:"title"`
	CreatedAt  time.Time `bson:"created_at"`
}

// HashName is a hash an object took, at the time it took it; the latest is the current hash.
type HashName struct {
	Hash     string    `bson:"_id"`
	ObjectID string    `bson:"object_id"`
	At       time.Time `bson:"at"`
}

// AddEvents stores projected events, each once, in one command.
func (s *Store) AddEvents(ctx context.Context, evs []Event) error {
	_, err := mongox.InsertNew(ctx, s.c(Events), evs)
	return err
}

// AddObject stores a created object once.
func (s *Store) AddObject(ctx context.Context, o Object) error {
	return mongox.InsertOnce(ctx, s.c(Objects), o)
}

// AddHash records a hash an object took.
func (s *Store) AddHash(ctx context.Context, h HashName) error {
	return mongox.InsertOnce(ctx, s.c(Hashes), h)
}

// Objects returns every known object by id, each with its current hash.
func (s *Store) Objects(ctx context.Context) (map[string]Object, error) {
	list, err := mongox.FindAll[Object](ctx, s.c(Objects), bson.D{})
	if err != nil {
		return nil, err
	}
	out := make(map[string]Object, len(list))
	for _, o := range list {
		out[o.ID] = o
	}
	ids := make([]string, 0, len(out))
	for id := range out {
		ids = append(ids, id)
	}
	current, err := s.CurrentHashes(ctx, ids)
	if err != nil {
		return nil, err
	}
	for id, hash := range current {
		o := out[id]
		o.Hash = hash
		out[id] = o
	}
	return out, nil
}

// EventsOf returns the events of the given types, newest first. objectID, when not empty,
// keeps only that object's events; since, when not zero, only events from then on.
func (s *Store) EventsOf(ctx context.Context, types []string, objectID string, since time.Time) ([]Event, error) {
	filter := bson.D{{Key: "type", Value: bson.D{{Key: "$in", Value: types}}}}
	if objectID != "" {
		filter = append(filter, bson.E{Key: "object_id", Value: objectID})
	}
	if !since.IsZero() {
		filter = append(filter, bson.E{Key: "at", Value: bson.D{{Key: "$gte", Value: since}}})
	}
	return mongox.FindAll[Event](ctx, s.c(Events), filter, options.Find().SetSort(bson.D{{Key: "_id", Value: -1}}))
}

// CountEvents counts the events of one type, leaving out the objects named in except.
func (s *Store) CountEvents(ctx context.Context, eventType string, except []string) (int64, error) {
	filter := bson.D{{Key: "type", Value: eventType}}
	if len(except) > 0 {
		filter = append(filter, bson.E{Key: "object_id", Value: bson.D{{Key: "$nin", Value: except}}})
	}
	n, err := s.c(Events).CountDocuments(ctx, filter)
	if err != nil {
		return 0, fmt.Errorf("store network events: %w", err)
	}
	return n, nil
}

// CurrentHashes returns the current hash of each given object that the projection knows.
func (s *Store) CurrentHashes(ctx context.Context, objectIDs []string) (map[string]string, error) {
	out := map[string]string{}
	if len(objectIDs) == 0 {
		return out, nil
	}
	hashes, err := mongox.FindAll[HashName](ctx, s.c(Hashes), bson.D{{Key: "object_id", Value: bson.D{{Key: "$in", Value: objectIDs}}}},
		options.Find().SetSort(bson.D{{Key: "at", Value: 1}, {Key: "_id", Value: 1}}))
	if err != nil {
		return nil, err
	}
	for _, h := range hashes {
		out[h.ObjectID] = h.Hash
	}
	return out, nil
}

// Object reads one projected object by id (mongox.ErrNotFound when it is not projected yet).
func (s *Store) Object(ctx context.Context, id string) (Object, error) {
	var o Object
	err := mongox.FindOne(ctx, s.c(Objects), mongox.ByID(id), &o)
	return o, err
}
