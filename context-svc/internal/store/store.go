// Package store is context-svc's MongoDB repository: every version of an object's context (the
// current one is the profile), a head hint per object, the sync configuration, sources, context
// links and the decisions learned from graph-svc.
//
// A context write is the insert of the document of the next version, whose id
// (object_id:version) is unique: the insert is the one atomic step that decides which of
// concurrent writers gets a version, so none is lost even on FerretDB, whose conditional updates
// are not atomic. The pending events of a write travel in the same document.
package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
)

// Collection names.
const (
	Versions  = "versions"
	Heads     = "heads"
	Syncs     = "syncs"
	Sources   = "sources"
	Links     = "links"
	Decisions = "decisions"
)

// Errors the handlers map to HTTP answers.
var (
	ErrNotFound = errors.New("not found")
	// ErrContention says that a write lost the race for the next version too many times.
	ErrContention = errors.New("too many concurrent writes")
)

// Indexes are the indexes real MongoDB needs for the queries below.
var Indexes = []mongox.Index{
	{Collection: Versions, Keys: bson.D{{Key: "object_id", Value: 1}, {Key: "version", Value: -1}}},
	{Collection: Versions, Keys: bson.D{{Key: "object_id", Value: 1}, {Key: "memory_changed", Value: 1}, {Key: "version", Value: -1}}},
	{Collection: Sources, Keys: bson.D{{Key: "object_id", Value: 1}, {Key: "_id", Value: 1}}},
	{Collection: Links, Keys: bson.D{{Key: "object_id", Value: 1}, {Key: "_id", Value: -1}}},
	{Collection: Decisions, Keys: bson.D{{Key: "object_id", Value: 1}, {Key: "created_at", Value: -1}}},
}

// Profile is an object's context as it stood after one write. The latest one is the object's
// current profile; its version is the object's context version.
type Profile struct {
	ID        string          `bson:"_id"` // object_id:version
	ObjectID  string          `bson:"object_id"`
	Version   int             `bson:"version"`
	Change    string          `bson:"change"`
	UpdatedAt time.Time       `bson:"updated_at"`
	LLMTxt    string          `bson:"llm_txt"`
	Title     string          `bson:"title"`
	Rules     *contract.Rules `bson:"rules"`
	// Included are the ids of the sources composed into the public profile, in order.
	Included []string `bson:"included"`
	Memory   string   `bson:"memory"`
	// MemoryVersion is the version of the last decision-memory write (0: never written).
	MemoryVersion int `bson:"memory_version"`
	// MemoryChanged marks the versions written by a decision-memory write.
	MemoryChanged bool     `bson:"memory_changed"`
	Events        []string `bson:"_events,omitempty"`
}

// VersionID is the id of an object's version document.
func VersionID(objectID string, version int) string { return objectID + ":" + strconv.Itoa(version) }

// Changes recorded with versions.
const (
	ChangeCreated        = "created"
	ChangeLLMTxt         = "llm_txt"
	ChangeContext        = "context"
	ChangeRules          = "rules"
	ChangeSources        = "sources"
	ChangeSync           = "sync"
	ChangeDecisionMemory = "decision_memory"
)

// Store is the repository.
type Store struct {
	db *mongo.Database
	// MaxAttempts bounds the retries of a write that keeps losing the race for a version.
	MaxAttempts int
}

// New returns a store over db.
func New(db *mongo.Database) *Store { return &Store{db: db, MaxAttempts: 32} }

func (s *Store) c(name string) *mongo.Collection { return s.db.Collection(name) }

func byID(id any) bson.D { return bson.D{{Key: "_id", Value: id}} }

var withoutEvents = bson.D{{Key: events.EventsField, Value: 0}}

// version reads one version document.
func (s *Store) version(ctx context.Context, objectID string, version int) (*Profile, error) {
	var p Profile
	err := s.c(Versions).FindOne(ctx, byID(VersionID(objectID, version)), options.FindOne().SetProjection(withoutEvents)).Decode(&p)
	if mongox.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store versions: %w", err)
	}
	return &p, nil
}

// Profile returns an object's current profile, or ErrNotFound when it is not materialised yet.
// It starts at the head hint and follows the versions written since, so that it never misses a
// completed write even when the hint lags behind.
func (s *Store) Profile(ctx context.Context, objectID string) (*Profile, error) {
	var head struct {
		Version int `bson:"version"`
	}
	err := s.c(Heads).FindOne(ctx, byID(objectID)).Decode(&head)
	if err != nil && !mongox.IsNotFound(err) {
		return nil, fmt.Errorf("store heads: %w", err)
	}
	p, err := s.version(ctx, objectID, max(head.Version, 1))
	if err != nil {
		return nil, err
	}
	followed := false
	for {
		next, err := s.version(ctx, objectID, p.Version+1)
		if errors.Is(err, ErrNotFound) {
			break
		}
		if err != nil {
			return nil, err
		}
		p, followed = next, true
	}
	if followed {
		s.advanceHead(ctx, objectID, p.Version)
	}
	return p, nil
}

// advanceHead moves the head hint forward (never back). A failure only costs later reads a step.
func (s *Store) advanceHead(ctx context.Context, objectID string, version int) {
	_, _ = s.c(Heads).UpdateOne(ctx, byID(objectID), bson.D{{Key: "$max", Value: bson.D{{Key: "version", Value: version}}}},
		options.UpdateOne().SetUpsert(true))
}

// Materialise stores the first version of a new object from identity-svc's view of it, unless it
// exists already, and returns the current profile. It is idempotent: the object.created
// consumer and the first read or write of the object may race to call it.
func (s *Store) Materialise(ctx context.Context, obj contract.Object) (*Profile, error) {
	created, err := time.Parse(clock.Layout, obj.CreatedAt)
	if err != nil {
		created = clock.Now()
	}
	first := max(obj.Version, 1)
	p := &Profile{
		ID: VersionID(obj.ObjectID, first), ObjectID: obj.ObjectID, Version: first, Change: ChangeCreated,
		UpdatedAt: created, LLMTxt: obj.InitialLLMTxt, Title: contract.ProfileTitle(obj.InitialLLMTxt),
		Rules: obj.Rules, Included: []string{},
	}
	if _, err := s.c(Versions).InsertOne(ctx, p); err != nil && !mongox.IsDuplicateKey(err) {
		return nil, fmt.Errorf("store versions: %w", err)
	}
	if first > 1 { // identity-svc knows a later version: the reads start there
		s.advanceHead(ctx, obj.ObjectID, first)
	}
	return s.Profile(ctx, obj.ObjectID)
}

// Edit is one context write: it changes a copy of the current profile and returns the events to
// publish with it (they see the profile with its new version), staged in Outbox before the
// version is written.
type Edit struct {
	Change string
	Apply  func(p *Profile) error
	Events func(p *Profile) []events.Pending
	Outbox events.Stager
	At     time.Time
}

// Write applies an edit as the object's next version: it reads the current profile, applies the
// edit and inserts the next version's document. When another writer took that version first, it
// reads again and retries, so concurrent writes each get their own version and none is lost.
func (s *Store) Write(ctx context.Context, objectID string, e Edit) (*Profile, error) {
	for attempt := range s.MaxAttempts {
		cur, err := s.Profile(ctx, objectID)
		if err != nil {
			return nil, err
		}
		next := *cur
		next.Included = slices.Clone(cur.Included)
		if err := e.Apply(&next); err != nil {
			return nil, err
		}
		next.Version = cur.Version + 1
		next.ID, next.Change, next.UpdatedAt = VersionID(objectID, next.Version), e.Change, e.At
		next.MemoryChanged = e.Change == ChangeDecisionMemory
		if next.MemoryChanged {
			next.MemoryVersion = next.Version
		}
		next.Events = nil
		if e.Events != nil {
			evs := e.Events(&next)
			if err := e.Outbox.Stage(ctx, Versions, next.ID, evs...); err != nil {
				return nil, err
			}
			next.Events = events.IDs(evs...)
		}
		_, err = s.c(Versions).InsertOne(ctx, &next)
		if mongox.IsDuplicateKey(err) {
			// Another writer took this version: back off a little, more after each loss.
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(rand.IntN(2+attempt)) * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("store versions: %w", err)
		}
		s.advanceHead(ctx, objectID, next.Version)
		return &next, nil
	}
	return nil, ErrContention
}

// VersionOf returns one version of an object.
func (s *Store) VersionOf(ctx context.Context, objectID string, version int) (*Profile, error) {
	return s.version(ctx, objectID, version)
}

// VersionQuery pages through an object's versions, newest first.
type VersionQuery struct {
	ObjectID string
	// Before is a version number cursor: only versions below it (0: from the newest).
	Before int
	Limit  int
	// MemoryOnly selects the versions written by decision-memory writes.
	MemoryOnly bool
}

// ListVersions lists versions without their content.
func (s *Store) ListVersions(ctx context.Context, q VersionQuery) ([]Profile, error) {
	filter := bson.D{{Key: "object_id", Value: q.ObjectID}}
	if q.Before > 0 {
		filter = append(filter, bson.E{Key: "version", Value: bson.D{{Key: "$lt", Value: q.Before}}})
	}
	if q.MemoryOnly {
		filter = append(filter, bson.E{Key: "memory_changed", Value: true})
	}
	opts := options.Find().SetSort(bson.D{{Key: "version", Value: -1}}).SetLimit(int64(q.Limit)).
		SetProjection(bson.D{{Key: "version", Value: 1}, {Key: "change", Value: 1}, {Key: "updated_at", Value: 1}})
	return findAll[Profile](ctx, s.c(Versions), filter, opts)
}

// findAll runs a query and decodes every document it finds.
func findAll[T any](ctx context.Context, coll *mongo.Collection, filter bson.D, opts *options.FindOptionsBuilder) ([]T, error) {
	cur, err := coll.Find(ctx, filter, opts)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", coll.Name(), err)
	}
	var out []T
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("store %s: %w", coll.Name(), err)
	}
	return out, nil
}

// SyncConfig is the git repository that an object's llm.txt is pulled from.
type SyncConfig struct {
	ObjectID     string     `bson:"_id"`
	RepoURL      string     `bson:"repo_url"`
	Branch       string     `bson:"branch"`
	FilePath     string     `bson:"file_path"`
	LastCommit   string     `bson:"last_commit,omitempty"`
	LastSyncedAt *time.Time `bson:"last_synced_at,omitempty"`
}

// Sync returns an object's sync configuration, or ErrNotFound.
func (s *Store) Sync(ctx context.Context, objectID string) (*SyncConfig, error) {
	var cfg SyncConfig
	err := s.c(Syncs).FindOne(ctx, byID(objectID)).Decode(&cfg)
	if mongox.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store syncs: %w", err)
	}
	return &cfg, nil
}

// SetSync stores an object's sync configuration, replacing any earlier one.
func (s *Store) SetSync(ctx context.Context, cfg *SyncConfig) error {
	_, err := s.c(Syncs).ReplaceOne(ctx, byID(cfg.ObjectID), cfg, options.Replace().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("store syncs: %w", err)
	}
	return nil
}

// RecordSync records the commit of the last pull, unless the configuration changed meanwhile.
func (s *Store) RecordSync(ctx context.Context, cfg *SyncConfig, commit string, at time.Time) error {
	filter := bson.D{{Key: "_id", Value: cfg.ObjectID}, {Key: "repo_url", Value: cfg.RepoURL},
		{Key: "branch", Value: cfg.Branch}, {Key: "file_path", Value: cfg.FilePath}}
	_, err := s.c(Syncs).UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: bson.D{
		{Key: "last_commit", Value: commit}, {Key: "last_synced_at", Value: at},
	}}})
	if err != nil {
		return fmt.Errorf("store syncs: %w", err)
	}
	return nil
}
