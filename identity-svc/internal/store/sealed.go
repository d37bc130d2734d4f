package store

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"golang.org/x/sync/errgroup"

	"github.com/svcdev/svc/pkg/mongox"
)

// objectIDScope is the prefix of every object id (apikey.NewID("obj")): object ids are ULIDs, so
// the objects in _id order are the objects in creation order.
const objectIDScope = "obj_"

// sealedReaders is how many objects' key facts a page of sealed keys reads at once.
const sealedReaders = 8

// SealedKey is a signing key svc holds, as stored: the fact id its sealing is bound to and the
// sealed seed.
type SealedKey struct {
	FactID   string
	ObjectID string
	Sealed   []byte
}

// NewestSealedKeys returns the sealed keys of the newest objects (at most objects of them, each
// with at most its MaxSigningKeys keys): a bounded sample of what the configured secrets must open.
func (s *Store) NewestSealedKeys(ctx context.Context, objects int) ([]SealedKey, error) {
	keys, _, _, err := s.sealedKeys(ctx, mongox.Range{Scope: objectIDScope, Desc: true, Limit: objects})
	return keys, err
}

// SealedKeysAfter returns the sealed keys of the next objects (at most objects of them) after the
// object id after ("" from the first), in id order, how many objects it read, and the last
// object id read: the cursor of the next call, "" when no object is left. It pages through every key svc holds in bounded
// memory: one _id range of the objects, then point reads of each object's numbered key facts.
func (s *Store) SealedKeysAfter(ctx context.Context, after string, objects int) ([]SealedKey, int, string, error) {
	return s.sealedKeys(ctx, mongox.Range{Scope: objectIDScope, After: after, Limit: objects})
}

func (s *Store) sealedKeys(ctx context.Context, r mongox.Range) ([]SealedKey, int, string, error) {
	type idOnly struct {
		ID string `bson:"_id"`
	}
	ids, err := mongox.FindAll[idOnly](ctx, s.db.Collection(Objects), r.Filter(),
		r.Options().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, 0, "", fmt.Errorf("read objects: %w", err)
	}
	// The objects' key facts are read a few objects at a time (point reads, each object's in
	// order), and kept in the objects' order.
	perObject := make([][]fact, len(ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(sealedReaders)
	for i, o := range ids {
		g.Go(func() error {
			facts, err := s.numbered(gctx, o.ID, factSigKey, 1)
			if err != nil {
				return fmt.Errorf("read the signing keys of %s: %w", o.ID, err)
			}
			perObject[i] = facts
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, "", err
	}
	var out []SealedKey
	for i, facts := range perObject {
		for _, f := range facts {
			if f.SigKey != nil && f.SigKey.Sealed != nil {
				out = append(out, SealedKey{FactID: f.ID, ObjectID: ids[i].ID, Sealed: f.SigKey.Sealed})
			}
		}
	}
	last := ""
	if len(ids) > 0 && (r.Limit == 0 || len(ids) == r.Limit) {
		last = ids[len(ids)-1].ID
	}
	return out, len(ids), last, nil
}

// ReplaceSealed stores sealed as the sealed seed of the key fact factID, by _id alone: a key fact
// is otherwise never updated, and two reseals that overlap both write the same seed sealed under
// the current secret, so either write is right. It reports whether the fact exists.
func (s *Store) ReplaceSealed(ctx context.Context, factID string, sealed []byte) (bool, error) {
	res, err := s.db.Collection(Facts).UpdateOne(ctx, mongox.ByID(factID),
		bson.D{{Key: "$set", Value: bson.D{{Key: "sigkey.sealed", Value: sealed}}}})
	if err != nil {
		return false, fmt.Errorf("reseal %s: %w", factID, err)
	}
	return res.MatchedCount == 1, nil
}
