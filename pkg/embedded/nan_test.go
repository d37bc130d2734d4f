package embedded

import (
	"context"
	"errors"
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestNaNIsACommandError: a NaN, which the store cannot keep, is refused as an error of the command
// that holds it, in a document or in a filter, and the connection serves the next command.
func TestNaNIsACommandError(t *testing.T) {
	t.Parallel()
	_, c := startHandler(t, "sqlite")
	coll := c.Database("nan").Collection("docs")
	ctx := context.Background()
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "a"}, {Key: "x", Value: 1.5}}); err != nil {
		t.Fatal(err)
	}
	for name, run := range map[string]func() error{
		"insert": func() error {
			_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "b"}, {Key: "x", Value: math.NaN()}})
			return err
		},
		"nested insert": func() error {
			_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "c"}, {Key: "x", Value: bson.A{1, bson.D{{Key: "y", Value: math.NaN()}}}}})
			return err
		},
		"update": func() error {
			_, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: "a"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: math.NaN()}}}})
			return err
		},
		"filter": func() error {
			return coll.FindOne(ctx, bson.D{{Key: "x", Value: math.NaN()}}).Err()
		},
	} {
		err := run()
		var ce mongo.CommandError
		var we mongo.WriteException
		if !errors.As(err, &ce) && !errors.As(err, &we) || mongo.IsNetworkError(err) {
			t.Errorf("%s with a NaN: %v (%T), want a command error", name, err, err)
		}
		var got bson.M
		if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: "a"}}).Decode(&got); err != nil || got["x"] != 1.5 {
			t.Errorf("after the %s with a NaN: %v (%v), want the document as it was", name, got, err)
		}
	}
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Errorf("%d documents (%v), want 1: nothing with a NaN stored", n, err)
	}
}
