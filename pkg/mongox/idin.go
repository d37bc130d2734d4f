package mongox

import (
	"context"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// MaxIDIn is the most ids one command selects with an _id $in: the embedded store serves a $in of
// up to 1,000 strings from its _id index and reads the whole collection for a longer one
// (third_party/ferretdb, IDRange). FindIn, UpdateIn and DeleteIn send longer lists in parts.
const MaxIDIn = 1000

// IDIn is the filter of the documents whose _id is one of ids: at most MaxIDIn of them, else a
// read of the whole collection on the embedded store.
func IDIn(ids []string) bson.D {
	return bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}
}

// FindIn reads the documents of coll whose _id is one of ids, with one find per MaxIDIn ids (none
// for no ids; an empty result is an empty, non-nil slice). opts apply to each find: a projection,
// not a sort or a limit of the whole.
func FindIn[T any](ctx context.Context, coll *mongo.Collection, ids []string, opts ...options.Lister[options.FindOptions]) ([]T, error) {
	out := []T{}
	for part := range slices.Chunk(ids, MaxIDIn) {
		docs, err := FindAll[T](ctx, coll, IDIn(part), opts...)
		if err != nil {
			return nil, err
		}
		out = append(out, docs...)
	}
	return out, nil
}

// UpdateIn applies update to the documents of coll whose _id is one of ids, with one command per
// MaxIDIn ids (none for no ids).
func UpdateIn(ctx context.Context, coll *mongo.Collection, ids []string, update any) error {
	for part := range slices.Chunk(ids, MaxIDIn) {
		if _, err := coll.UpdateMany(ctx, IDIn(part), update); err != nil {
			return fmt.Errorf("update %s: %w", coll.Name(), err)
		}
	}
	return nil
}

// DeleteIn deletes the documents of coll whose _id is one of ids, with one command per MaxIDIn ids
// (none for no ids).
func DeleteIn(ctx context.Context, coll *mongo.Collection, ids []string) error {
	for part := range slices.Chunk(ids, MaxIDIn) {
		if _, err := coll.DeleteMany(ctx, IDIn(part)); err != nil {
			return fmt.Errorf("delete from %s: %w", coll.Name(), err)
		}
	}
	return nil
}
