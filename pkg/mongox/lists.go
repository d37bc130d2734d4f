package mongox

import (
	"context"
	"encoding/hex"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// IDPart is id as a key part: id itself when it is one, else "~" and id's bytes in hex. Ids a
// service makes (apikey.NewID) are key parts and never start with "~"; an id learned from
// another service or an earlier release may not be one, and must not break a list's order.
func IDPart(id string) string {
	if id != "" && id[0] != '~' && KeyPart(id) {
		return id
	}
	return "~" + hex.EncodeToString([]byte(id))
}

// Keyed is an entry of a list kept as an _id range: its _id is its data key, its value what the
// list shows (a copy, or the id of the document it lists).
type Keyed[V any] struct {
	Key   string `bson:"_id"`
	Value V      `bson:"v"`
}

// InsertKeyed puts v into coll under key; an entry already there is taken as the same one (a
// redelivered append).
func InsertKeyed(ctx context.Context, coll *mongo.Collection, key string, v any) error {
	return InsertOnce(ctx, coll, bson.D{{Key: "_id", Value: key}, {Key: "v", Value: v}})
}
