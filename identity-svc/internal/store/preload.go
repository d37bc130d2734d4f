package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"golang.org/x/sync/errgroup"

	"github.com/svcdev/svc/pkg/contract"
)

// Preloaded is an object as creation stores it (its hash record, document and owner key) and,
// when Claim is set, a verified claim of it as claims-svc's event records it.
type Preloaded struct {
	Object   *Object
	OwnerKey *Key
	Claim    *SocialHandle
}

// preloadWriters bounds the claim writes Preload sends at once.
const preloadWriters = 8

// Preload stores objects in bulk, for benchmarks that measure reads at a given size: the same
// documents as InsertObject, ClaimHash, InsertKey and RecordClaim write, with one insert per
// collection (the directory's entries among them).
func (s *Store) Preload(ctx context.Context, items []Preloaded) error {
	var hashes, objects, keyIDs, keys []any
	var listed []any
	for _, it := range items {
		it.Object.Listed = true
		hashes = append(hashes, bson.D{{Key: "_id", Value: it.Object.Hash}, {Key: "object_id", Value: it.Object.ID}})
		objects = append(objects, it.Object)
		it.OwnerKey.Listed = true
		keyIDs = append(keyIDs, keyIDDoc{ID: it.OwnerKey.KeyID, Digest: it.OwnerKey.Digest})
		keys = append(keys, it.OwnerKey)
		if it.Object.Visibility == contract.Public {
			listed = append(listed, entry[directoryEntry]{Key: directoryKey(it.Object.ID), Value: directoryEntry{ObjectID: it.Object.ID}})
		}
	}
	for _, c := range []struct {
		name string
		docs []any
	}{{Ranges, listed}, {Hashes, hashes}, {Objects, objects}, {KeyIDs, keyIDs}, {Keys, keys}} {
		if len(c.docs) == 0 {
			continue
		}
		if _, err := s.db.Collection(c.name).InsertMany(ctx, c.docs, options.InsertMany().SetOrdered(false)); err != nil {
			return fmt.Errorf("preload %s: %w", c.name, err)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(preloadWriters)
	for _, it := range items {
		if it.Claim == nil {
			continue
		}
		g.Go(func() error {
			return s.RecordClaim(gctx, it.Object.ID, *it.Claim, it.Object.CreatedAt.Add(time.Second))
		})
	}
	return g.Wait()
}
