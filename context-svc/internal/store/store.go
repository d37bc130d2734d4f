// Package store is context-svc's MongoDB repository: one profile per object (its current context
// and version), a document per context version, sources, context links and the decisions learned
// from graph-svc.
package store

import (
	"context"
	"errors"
	"fmt"
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
	Profiles  = "profiles"
	Versions  = "versions"
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

// OutboxCollections are the collections whose documents carry pending events.
var OutboxCollections = []string{Profiles, Sources}

// Profile is an object's current context. Its version is the object's context version: every
// write that changes the composed profile or decision memory moves it by one.
type Profile struct {
	ObjectID string          `bson:"_id"`
	Version  int             `bson:"version"`
	LLMTxt   string          `bson:"llm_txt"`
	Title    string          `bson:"title"`
	Rules    *contract.Rules `bson:"rules"`
	// Included are the ids of the sources composed into the public profile, in order.
	Included []string `bson:"included"`
	Memory   string   `bson:"memory"`
	// MemoryVersion is the version of the last decision-memory write (0: never written).
	MemoryVersion int              `bson:"memory_version"`
	Sync          *SyncConfig      `bson:"sync,omitempty"`
	CreatedAt     time.Time        `bson:"created_at"`
	UpdatedAt     time.Time        `bson:"updated_at"`
	Outbox        []events.Pending `bson:"_outbox,omitempty"`
}

// SyncConfig is the git repository that llm.txt is pulled from.
type SyncConfig struct {
	RepoURL      string     `bson:"repo_url"`
	Branch       string     `bson:"branch"`
	FilePath     string     `bson:"file_path"`
	LastCommit   string     `bson:"last_commit,omitempty"`
	LastSyncedAt *time.Time `bson:"last_synced_at,omitempty"`
}

// Version is the context of an object as it stood after one write; its id is
// object_id:version, for point reads.
type Version struct {
	ID            string    `bson:"_id"`
	ObjectID      string    `bson:"object_id"`
	Version       int       `bson:"version"`
	Change        string    `bson:"change"`
	CreatedAt     time.Time `bson:"created_at"`
	LLMTxt        string    `bson:"llm_txt"`
	Title         string    `bson:"title"`
	Included      []string  `bson:"included"`
	Memory        string    `bson:"memory"`
	MemoryChanged bool      `bson:"memory_changed"`
}

// VersionID is the id of an object's version document.
func VersionID(objectID string, version int) string { return objectID + ":" + strconv.Itoa(version) }

// Changes recorded with versions.
const (
	ChangeCreated        = "created"
	ChangeLLMTxt         = "llm_txt"
	ChangeContext        = "context"
	ChangeSources        = "sources"
	ChangeSync           = "sync"
	ChangeDecisionMemory = "decision_memory"
)

func snapshot(p *Profile, change string, memoryChanged bool) *Version {
	return &Version{
		ID: VersionID(p.ObjectID, p.Version), ObjectID: p.ObjectID, Version: p.Version, Change: change,
		CreatedAt: p.UpdatedAt, LLMTxt: p.LLMTxt, Title: p.Title, Included: p.Included, Memory: p.Memory,
		MemoryChanged: memoryChanged,
	}
}

// Store is the repository.
type Store struct {
	db *mongo.Database
	// MaxAttempts bounds the retries of a write that keeps losing the race for a version.
	MaxAttempts int
}

// New returns a store over db.
func New(db *mongo.Database) *Store { return &Store{db: db, MaxAttempts: 20} }

func (s *Store) c(name string) *mongo.Collection { return s.db.Collection(name) }

func byID(id any) bson.D { return bson.D{{Key: "_id", Value: id}} }

// Profile returns an object's profile, or ErrNotFound when it is not materialised yet.
func (s *Store) Profile(ctx context.Context, objectID string) (*Profile, error) {
	var p Profile
	err := s.c(Profiles).FindOne(ctx, byID(objectID), options.FindOne().
		SetProjection(bson.D{{Key: events.OutboxField, Value: 0}})).Decode(&p)
	if mongox.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store profiles: %w", err)
	}
	return &p, nil
}

// Materialise creates the profile of a new object from identity-svc's view of it, unless it
// exists already, and returns the stored profile. It is idempotent: the object.created consumer
// and the first read or write of the object may race to call it.
func (s *Store) Materialise(ctx context.Context, obj contract.Object) (*Profile, error) {
	created, err := time.Parse(clock.Layout, obj.CreatedAt)
	if err != nil {
		created = clock.Now()
	}
	p := &Profile{
		ObjectID: obj.ObjectID, Version: max(obj.Version, 1), LLMTxt: obj.InitialLLMTxt,
		Title: contract.ProfileTitle(obj.InitialLLMTxt), Rules: obj.Rules, Included: []string{},
		CreatedAt: created, UpdatedAt: created,
	}
	_, err = s.c(Profiles).InsertOne(ctx, p)
	switch {
	case mongox.IsDuplicateKey(err):
		return s.Profile(ctx, obj.ObjectID)
	case err != nil:
		return nil, fmt.Errorf("store profiles: %w", err)
	}
	if err := s.insertVersion(ctx, snapshot(p, ChangeCreated, false)); err != nil {
		return nil, err
	}
	return p, nil
}

// insertVersion stores a version document; one that exists already is left as it is.
func (s *Store) insertVersion(ctx context.Context, v *Version) error {
	if _, err := s.c(Versions).InsertOne(ctx, v); err != nil && !mongox.IsDuplicateKey(err) {
		return fmt.Errorf("store versions: %w", err)
	}
	return nil
}

// Edit is one context write: it changes a copy of the current profile and returns the events to
// publish with it (they see the profile with its new version). A nil events function publishes
// nothing.
type Edit struct {
	Change string
	Apply  func(p *Profile) error
	Events func(p *Profile) []events.Pending
	At     time.Time
}

// Write applies an edit as the object's next version. It is a conditional update on the current
// version, retried from a fresh read when another write won the race, so concurrent writes never
// lose a version. The version document of the new version is written after the profile; a
// writer that died in between is repaired by the next write, which first stores the current
// version's document from the profile.
func (s *Store) Write(ctx context.Context, objectID string, e Edit) (*Profile, []events.Pending, error) {
	for range s.MaxAttempts {
		cur, err := s.Profile(ctx, objectID)
		if err != nil {
			return nil, nil, err
		}
		if err := s.insertVersion(ctx, snapshot(cur, ChangeContext, cur.MemoryVersion == cur.Version)); err != nil {
			return nil, nil, err
		}
		next := *cur
		next.Included = slices.Clone(cur.Included)
		if err := e.Apply(&next); err != nil {
			return nil, nil, err
		}
		next.Version = cur.Version + 1
		next.UpdatedAt = e.At
		memoryChanged := next.Memory != cur.Memory || e.Change == ChangeDecisionMemory
		if memoryChanged {
			next.MemoryVersion = next.Version
		}
		var evs []events.Pending
		if e.Events != nil {
			evs = e.Events(&next)
		}
		ok, err := s.casProfile(ctx, cur, &next, evs)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		if err := s.insertVersion(ctx, snapshot(&next, e.Change, memoryChanged)); err != nil {
			return nil, nil, err
		}
		return &next, evs, nil
	}
	return nil, nil, ErrContention
}

// casProfile sets the fields that changed between cur and next, if the stored version is still
// cur's. Fields the edit did not change are left alone, so that a concurrent rules or sync
// update (which does not move the version) is never overwritten with a stale copy.
func (s *Store) casProfile(ctx context.Context, cur, next *Profile, evs []events.Pending) (bool, error) {
	set := bson.D{{Key: "version", Value: next.Version}, {Key: "updated_at", Value: next.UpdatedAt}}
	if next.LLMTxt != cur.LLMTxt {
		set = append(set, bson.E{Key: "llm_txt", Value: next.LLMTxt})
	}
	if next.Title != cur.Title {
		set = append(set, bson.E{Key: "title", Value: next.Title})
	}
	if !sameRules(next.Rules, cur.Rules) {
		set = append(set, bson.E{Key: "rules", Value: next.Rules})
	}
	if !slices.Equal(next.Included, cur.Included) {
		set = append(set, bson.E{Key: "included", Value: next.Included})
	}
	if next.Memory != cur.Memory {
		set = append(set, bson.E{Key: "memory", Value: next.Memory})
	}
	if next.MemoryVersion != cur.MemoryVersion {
		set = append(set, bson.E{Key: "memory_version", Value: next.MemoryVersion})
	}
	update := bson.D{{Key: "$set", Value: set}}
	if len(evs) > 0 {
		update = append(update, bson.E{Key: "$push", Value: bson.D{{Key: events.OutboxField, Value: bson.D{{Key: "$each", Value: evs}}}}})
	}
	res, err := s.c(Profiles).UpdateOne(ctx, bson.D{{Key: "_id", Value: cur.ObjectID}, {Key: "version", Value: cur.Version}}, update)
	if err != nil {
		return false, fmt.Errorf("store profiles: %w", err)
	}
	return res.MatchedCount == 1, nil
}

func sameRules(a, b *contract.Rules) bool {
	ra, _ := bson.Marshal(struct{ R *contract.Rules }{a})
	rb, _ := bson.Marshal(struct{ R *contract.Rules }{b})
	return string(ra) == string(rb)
}

// SetRules replaces an object's rules without moving its version.
func (s *Store) SetRules(ctx context.Context, objectID string, rules *contract.Rules) error {
	return s.setProfile(ctx, objectID, bson.D{{Key: "rules", Value: rules}})
}

// SetSync stores the repository that llm.txt is pulled from.
func (s *Store) SetSync(ctx context.Context, objectID string, cfg *SyncConfig) error {
	return s.setProfile(ctx, objectID, bson.D{{Key: "sync", Value: cfg}})
}

// RecordSync records the commit of the last pull, unless the configuration changed meanwhile.
func (s *Store) RecordSync(ctx context.Context, objectID string, cfg SyncConfig, commit string, at time.Time) error {
	filter := bson.D{{Key: "_id", Value: objectID}, {Key: "sync.repo_url", Value: cfg.RepoURL},
		{Key: "sync.branch", Value: cfg.Branch}, {Key: "sync.file_path", Value: cfg.FilePath}}
	_, err := s.c(Profiles).UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: bson.D{
		{Key: "sync.last_commit", Value: commit}, {Key: "sync.last_synced_at", Value: at},
	}}})
	if err != nil {
		return fmt.Errorf("store profiles: %w", err)
	}
	return nil
}

func (s *Store) setProfile(ctx context.Context, objectID string, set bson.D) error {
	res, err := s.c(Profiles).UpdateOne(ctx, byID(objectID), bson.D{{Key: "$set", Value: set}})
	if err != nil {
		return fmt.Errorf("store profiles: %w", err)
	}
	if res.MatchedCount == 0 {
		return ErrNotFound
	}
	return nil
}

// VersionOf returns one version of an object. The current version is served from the profile
// when its document is missing (its writer stopped between the two writes).
func (s *Store) VersionOf(ctx context.Context, p *Profile, version int) (*Version, error) {
	var v Version
	err := s.c(Versions).FindOne(ctx, byID(VersionID(p.ObjectID, version))).Decode(&v)
	if mongox.IsNotFound(err) {
		if version == p.Version {
			return snapshot(p, ChangeContext, p.MemoryVersion == p.Version), nil
		}
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store versions: %w", err)
	}
	return &v, nil
}

// VersionQuery pages through an object's versions, newest first.
type VersionQuery struct {
	ObjectID string
	// Before is a version number cursor: only versions below it (0: from the newest).
	Before int
	Limit  int
	// MemoryOnly selects the versions that changed decision memory.
	MemoryOnly bool
}

// ListVersions lists versions without their content.
func (s *Store) ListVersions(ctx context.Context, q VersionQuery) ([]Version, error) {
	filter := bson.D{{Key: "object_id", Value: q.ObjectID}}
	if q.Before > 0 {
		filter = append(filter, bson.E{Key: "version", Value: bson.D{{Key: "$lt", Value: q.Before}}})
	}
	if q.MemoryOnly {
		filter = append(filter, bson.E{Key: "memory_changed", Value: true})
	}
	opts := options.Find().SetSort(bson.D{{Key: "version", Value: -1}}).SetLimit(int64(q.Limit)).
		SetProjection(bson.D{{Key: "version", Value: 1}, {Key: "change", Value: 1}, {Key: "created_at", Value: 1}})
	cur, err := s.c(Versions).Find(ctx, filter, opts)
	if err != nil {
		return nil, fmt.Errorf("store versions: %w", err)
	}
	var out []Version
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("store versions: %w", err)
	}
	return out, nil
}
