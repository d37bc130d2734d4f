// Package mongox connects to MongoDB (or FerretDB, which speaks its wire protocol), declares
// indexes and classifies driver errors.
package mongox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
)

// Connect opens a client and returns the named database. The caller disconnects the client.
// monitor, when given and not nil, sees every command the client sends.
func Connect(ctx context.Context, uri, database string, monitor ...*event.CommandMonitor) (*mongo.Client, *mongo.Database, error) {
	opts := options.Client().ApplyURI(uri).
		SetServerSelectionTimeout(10 * time.Second).
		SetTimeout(15 * time.Second)
	if len(monitor) > 0 && monitor[0] != nil {
		opts.SetMonitor(monitor[0])
	}
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, nil, fmt.Errorf("mongo connect: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := client.Ping(pctx, readpref.Primary()); err != nil {
		_ = client.Disconnect(context.Background())
		return nil, nil, fmt.Errorf("mongo ping: %w", err)
	}
	return client, client.Database(database), nil
}

// Ping reports whether the database answers, for readiness probes.
func Ping(ctx context.Context, db *mongo.Database) error {
	return db.Client().Ping(ctx, readpref.Primary())
}

// Index declares one index of a collection, or the collection alone.
//
// Keys of `_id` alone (`{_id: 1}`) declare the collection only: every collection has its `_id`
// index. Earlier releases made such a declaration with createIndexes, which real MongoDB takes as
// its `_id` index, but on which FerretDB built a second, non-unique index on `_id` ("_id_1")
// that every insert then kept up to date; EnsureIndexes drops it where it finds it.
type Index struct {
	Collection string
	Keys       bson.D
	Unique     bool
	Sparse     bool
	Name       string
	// Retired says that earlier releases created this index, which no query needs any more: the
	// entry declares the collection, and EnsureIndexes drops the index where it finds it.
	Retired bool
}

// declaresOnly tells an entry that declares its collection and no index of its own, and the name
// of the index that earlier releases created for it, if any.
func (ix Index) declaresOnly() (retired string, ok bool) {
	if len(ix.Keys) == 1 && ix.Keys[0].Key == "_id" && !ix.Unique && !ix.Sparse {
		return "_id_1", true
	}
	if ix.Retired {
		return ix.name(), true
	}
	return "", false
}

// name is the index's name: Name, or the name MongoDB and its drivers give an index by default
// (each key and its direction, joined by "_").
func (ix Index) name() string {
	if ix.Name != "" {
		return ix.Name
	}
	parts := make([]string, 0, 2*len(ix.Keys))
	for _, k := range ix.Keys {
		parts = append(parts, k.Key, fmt.Sprint(k.Value))
	}
	return strings.Join(parts, "_")
}

// EnsureIndexes creates the collections and indexes declared (creating an existing one is a
// no-op), and drops the indexes of earlier releases that entries retire: one listCollections,
// and a listIndexes per retiring entry.
func EnsureIndexes(ctx context.Context, db *mongo.Database, indexes []Index) error {
	have, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return fmt.Errorf("list collections: %w", err)
	}
	for _, ix := range indexes {
		if retired, ok := ix.declaresOnly(); ok {
			if err := declareCollection(ctx, db, ix.Collection, retired, &have); err != nil {
				return err
			}
			continue
		}
		opts := options.Index()
		if ix.Unique {
			opts.SetUnique(true)
		}
		if ix.Sparse {
			opts.SetSparse(true)
		}
		if ix.Name != "" {
			opts.SetName(ix.Name)
		}
		_, err := db.Collection(ix.Collection).Indexes().CreateOne(ctx, mongo.IndexModel{Keys: ix.Keys, Options: opts})
		if err != nil {
			return fmt.Errorf("create index on %s: %w", ix.Collection, err)
		}
		have = append(have, ix.Collection)
	}
	return nil
}

// declareCollection creates the collection name unless it is among have, or else drops its index
// retired where it is.
func declareCollection(ctx context.Context, db *mongo.Database, name, retired string, have *[]string) error {
	if !slices.Contains(*have, name) {
		err := db.CreateCollection(ctx, name)
		var ce mongo.CommandError
		if err != nil && !(errors.As(err, &ce) && ce.Code == 48) { // NamespaceExists: another replica made it
			return fmt.Errorf("create collection %s: %w", name, err)
		}
		*have = append(*have, name)
		return nil
	}
	specs, err := db.Collection(name).Indexes().ListSpecifications(ctx)
	if err != nil {
		return fmt.Errorf("list indexes of %s: %w", name, err)
	}
	for _, spec := range specs {
		if spec.Name != retired {
			continue
		}
		if err := db.Collection(name).Indexes().DropOne(ctx, retired); err != nil {
			var ce mongo.CommandError
			if !errors.As(err, &ce) || ce.Code != 27 { // IndexNotFound: another replica dropped it
				return fmt.Errorf("drop index %s of %s: %w", retired, name, err)
			}
		}
	}
	return nil
}

// IsDuplicateKey reports whether err is a unique-index violation. FerretDB reports a duplicate
// caused by an update as an internal error rather than code 11000, so that shape is matched too.
func IsDuplicateKey(err error) bool {
	var ce mongo.CommandError
	return err != nil && (mongo.IsDuplicateKeyError(err) ||
		errors.As(err, &ce) && strings.Contains(strings.ToLower(ce.Message), "duplicate key") ||
		strings.Contains(err.Error(), "E11000"))
}

// OnlyDuplicateKeys reports whether every failure of an unordered bulk insert was a duplicate
// key: the documents that were new got in, the others were there already.
func OnlyDuplicateKeys(err error) bool {
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) {
		return IsDuplicateKey(err)
	}
	if bwe.WriteConcernError != nil || len(bwe.WriteErrors) == 0 {
		return false
	}
	for _, we := range bwe.WriteErrors {
		if we.Code != 11000 && !IsDuplicateKey(errors.New(we.Message)) {
			return false
		}
	}
	return true
}

// IsNotFound reports whether err says that no document matched: the driver's ErrNoDocuments or
// ErrNotFound.
func IsNotFound(err error) bool {
	return errors.Is(err, mongo.ErrNoDocuments) || errors.Is(err, ErrNotFound)
}

// ErrNotFound says that no document matched. Stores return it (wrapped or not) so that callers
// test with errors.Is and never see driver errors.
var ErrNotFound = errors.New("not found")

// ErrTaken says that a document with the same _id (or unique key) exists: another writer got
// there first. Stores return it (wrapped or not) so that callers test with errors.Is.
var ErrTaken = errors.New("already recorded")

// Insert inserts doc into coll; a duplicate key is ErrTaken.
func Insert(ctx context.Context, coll *mongo.Collection, doc any) error {
	_, err := coll.InsertOne(ctx, doc)
	if IsDuplicateKey(err) {
		return ErrTaken
	}
	if err != nil {
		return fmt.Errorf("insert into %s: %w", coll.Name(), err)
	}
	return nil
}

// InsertOnce inserts doc, treating an existing document with the same _id as done: it suits
// documents keyed by what they record, whose existing copy is the same.
func InsertOnce(ctx context.Context, coll *mongo.Collection, doc any) error {
	if err := Insert(ctx, coll, doc); err != nil && !errors.Is(err, ErrTaken) {
		return err
	}
	return nil
}

// InsertNew inserts docs in one unordered command and reports which of them got in: a document
// whose _id (or unique key) exists is left out, as by InsertOnce. Any other failure is an error.
func InsertNew[T any](ctx context.Context, coll *mongo.Collection, docs []T) (inserted []bool, err error) {
	inserted = make([]bool, len(docs))
	if len(docs) == 0 {
		return inserted, nil
	}
	for i := range inserted {
		inserted[i] = true
	}
	_, err = coll.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	if err == nil {
		return inserted, nil
	}
	var bwe mongo.BulkWriteException
	if !OnlyDuplicateKeys(err) || !errors.As(err, &bwe) {
		return nil, fmt.Errorf("insert into %s: %w", coll.Name(), err)
	}
	for _, we := range bwe.WriteErrors {
		if we.Index >= 0 && we.Index < len(docs) {
			inserted[we.Index] = false
		}
	}
	return inserted, nil
}

// InsertNewInBatches is InsertNew over docs of any number, at most batch documents a command:
// a large insert (an upgrade's, a preload's, a backlog's batch) would otherwise outlast the
// client's timeout in one command. It reports which documents got in, in docs' order.
func InsertNewInBatches[T any](ctx context.Context, coll *mongo.Collection, docs []T, batch int) ([]bool, error) {
	out := make([]bool, 0, len(docs))
	for start := 0; start < len(docs); start += batch {
		in, err := InsertNew(ctx, coll, docs[start:min(start+batch, len(docs))])
		if err != nil {
			return nil, err
		}
		out = append(out, in...)
	}
	return out, nil
}

// Upsert updates the document with _id id, creating it when there is none. Of upserts of one new
// _id at once, all but one may fail as duplicates on FerretDB (and on MongoDB before 4.2): the
// document exists then, so Upsert runs the update again once, as an update of it.
func Upsert(ctx context.Context, coll *mongo.Collection, id, update any) error {
	return retryDuplicate(coll, func() error {
		_, err := coll.UpdateOne(ctx, ByID(id), update, options.UpdateOne().SetUpsert(true))
		return err
	})
}

// ReplaceUpsert replaces the document with _id id by doc, or inserts doc; a duplicate of a
// concurrent insert is retried as Upsert's is.
func ReplaceUpsert(ctx context.Context, coll *mongo.Collection, id, doc any) error {
	return retryDuplicate(coll, func() error {
		_, err := coll.ReplaceOne(ctx, ByID(id), doc, options.Replace().SetUpsert(true))
		return err
	})
}

// BulkUpsert runs upsert models of coll (replaces or updates with SetUpsert) in one unordered
// command. Upserts of one new _id at once may fail as duplicates, as Upsert's may: when every
// failure was one, those documents exist then, and the models run once more, as updates of them.
func BulkUpsert(ctx context.Context, coll *mongo.Collection, models []mongo.WriteModel) error {
	write := func() error {
		_, err := coll.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
		return err
	}
	err := write()
	if err != nil && OnlyDuplicateKeys(err) {
		err = write()
	}
	if err != nil {
		return fmt.Errorf("upsert into %s: %w", coll.Name(), err)
	}
	return nil
}

func retryDuplicate(coll *mongo.Collection, write func() error) error {
	err := write()
	if IsDuplicateKey(err) {
		err = write()
	}
	if err != nil {
		return fmt.Errorf("upsert into %s: %w", coll.Name(), err)
	}
	return nil
}

// ByID is the filter of one document by _id.
func ByID(id any) bson.D { return bson.D{{Key: "_id", Value: id}} }

// FindOne decodes the first document matching filter into dst; no match is ErrNotFound.
func FindOne(ctx context.Context, coll *mongo.Collection, filter, dst any, opts ...options.Lister[options.FindOneOptions]) error {
	err := coll.FindOne(ctx, filter, opts...).Decode(dst)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("find in %s: %w", coll.Name(), err)
	}
	return nil
}

// FindAll decodes every document of coll matching filter, in opts' order; an empty result is an
// empty, non-nil slice.
func FindAll[T any](ctx context.Context, coll *mongo.Collection, filter any, opts ...options.Lister[options.FindOptions]) ([]T, error) {
	cur, err := coll.Find(ctx, filter, opts...)
	if err != nil {
		return nil, fmt.Errorf("find in %s: %w", coll.Name(), err)
	}
	out := []T{}
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("find in %s: %w", coll.Name(), err)
	}
	return out, nil
}

// lease is a reservation held by whoever inserted it first, until it expires.
type lease struct {
	ID        string    `bson:"_id"`
	ExpiresAt time.Time `bson:"expires_at"`
}

// Leases is a collection of leases: replicas that each run a periodic job take a lease per item
// and period, so that one of them does the work. FerretDB has no TTL index: the owner sweeps
// expired leases with Sweep.
type Leases struct{ coll *mongo.Collection }

// NewLeases returns the leases kept in coll.
func NewLeases(coll *mongo.Collection) Leases { return Leases{coll: coll} }

// Take reserves key until expires, for the first caller that asks. It reports false, without
// error, when the lease is already held.
func (l Leases) Take(ctx context.Context, key string, expires time.Time) (bool, error) {
	err := Insert(ctx, l.coll, lease{ID: key, ExpiresAt: expires})
	if errors.Is(err, ErrTaken) {
		return false, nil
	}
	return err == nil, err
}

// Sweep deletes the leases that expired before now.
func (l Leases) Sweep(ctx context.Context, now time.Time) error {
	if _, err := l.coll.DeleteMany(ctx, bson.D{{Key: "expires_at", Value: bson.D{{Key: "$lt", Value: now}}}}); err != nil {
		return fmt.Errorf("sweep %s: %w", l.coll.Name(), err)
	}
	return nil
}
