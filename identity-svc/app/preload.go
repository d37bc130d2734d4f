package app

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/identity-svc/internal/object"
	"github.com/svcdev/svc/identity-svc/internal/store"
)

// PreloadObject is an object for Preload.
type PreloadObject = object.PreloadObject

// PreloadedObject is a preloaded object's hash and owner key.
type PreloadedObject = object.PreloadedObject

// Preload grows identity-svc's store at db with objects, through the same code as creation and
// claim verification, in bulk (object.Preload). It is for benchmarks that measure reads at a
// given size (deploy/e2e's scale benchmark); nothing else may create objects meanwhile.
func Preload(ctx context.Context, db *mongo.Database, in []PreloadObject) ([]PreloadedObject, error) {
	return object.Preload(ctx, store.New(db), in)
}
