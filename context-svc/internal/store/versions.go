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

// A context write is the insert of the document of the next version, whose id
// (object_id:version) is unique: the insert is the one atomic step that decides which of
// concurrent writers gets a version, so none is lost even on FerretDB, whose conditional updates
// are not atomic. The events of a write are staged in the outbox right before the insert, and
// the document records their ids.

// ErrContention says that a write lost the race for the next version too many times.
var ErrContention = errors.New("too many concurrent writes")

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
	// Memory and MemoryVersion are what decision memory was, and the context version that last
	// wrote it, while it shared the context's versions; later versions carry them unchanged.
	// Decision memory has its own versions now (memory.go), and takes these over on first use.
	Memory        string `bson:"memory"`
	MemoryVersion int    `bson:"memory_version"`
	// Events are the ids of the events staged with this version's write.
	Events []string `bson:"_events,omitempty"`
}

// VersionID is the id of an object's version document.
func VersionID(objectID string, version int) string { return objectID + ":" + strconv.Itoa(version) }

// Changes recorded with versions.
const (
	ChangeCreated = "created"
	ChangeLLMTxt  = "llm_txt"
	ChangeContext = "context"
	ChangeRules   = "rules"
	ChangeSources = "sources"
	ChangeSync    = "sync"
	// ChangeDecisionMemory names the versions decision-memory writes made while decision memory
	// shared the context's versions; none is written now.
	ChangeDecisionMemory = "decision_memory"
)

// VersionOf returns one version of an object, or mongox.ErrNotFound.
func (s *Store) VersionOf(ctx context.Context, objectID string, version int) (*Profile, error) {
	var p Profile
	err := mongox.FindOne(ctx, s.versions, mongox.ByID(VersionID(objectID, version)), &p,
		options.FindOne().SetProjection(withoutEvents))
	if err != nil {
		return nil, fmt.Errorf("store versions: %w", err)
	}
	return &p, nil
}

// Profile returns an object's current profile, or mongox.ErrNotFound when it is not materialised
// yet. It starts at the head hint and follows the versions written since, so that it never
// misses a completed write even when the hint lags behind.
func (s *Store) Profile(ctx context.Context, objectID string) (*Profile, error) {
	var head struct {
		Version int `bson:"version"`
	}
	if err := mongox.FindOne(ctx, s.heads, mongox.ByID(objectID), &head); err != nil && !errors.Is(err, mongox.ErrNotFound) {
		return nil, fmt.Errorf("store heads: %w", err)
	}
	p, err := s.VersionOf(ctx, objectID, max(head.Version, 1))
	if err != nil {
		return nil, err
	}
	followed := false
	for {
		next, err := s.VersionOf(ctx, objectID, p.Version+1)
		if errors.Is(err, mongox.ErrNotFound) {
			break
		}
		if err != nil {
			return nil, err
		}
		p, followed = next, true
	}
	if followed {
		if err := s.advanceHead(ctx, objectID, p.Version); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// advanceHead moves the head hint forward (never back).
func (s *Store) advanceHead(ctx context.Context, objectID string, version int) error {
	if err := advanceHint(ctx, s.heads, objectID, version); err != nil {
		return fmt.Errorf("store heads: %w", err)
	}
	return nil
}

// advanceHint moves the version of the head hint id in coll forward (never back).
func advanceHint(ctx context.Context, coll *mongo.Collection, id string, version int) error {
	return mongox.Upsert(ctx, coll, id, bson.D{{Key: "$max", Value: bson.D{{Key: "version", Value: version}}}})
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
	if _, err := s.versions.InsertOne(ctx, p); err != nil && !mongox.IsDuplicateKey(err) {
		return nil, fmt.Errorf("store versions: %w", err)
	}
	if first > 1 { // identity-svc knows a later version: the reads start there
		if err := s.advanceHead(ctx, obj.ObjectID, first); err != nil {
			return nil, err
		}
	}
	return s.Profile(ctx, obj.ObjectID)
}

// Edit is one context write: it changes a copy of the current profile and returns the events to
// publish with it (they see the profile with its new version), staged in Outbox right before the
// version is inserted.
type Edit struct {
	Change string
	Apply  func(p *Profile) error
	Events func(p *Profile) []events.Pending
	Outbox events.Stager
	At     time.Time
}

// Write applies an edit as the object's next version: it reads the current profile, applies the
// edit, stages its events and inserts the next version's document. When another writer took that
// version first, it reads again and retries, so concurrent writes each get their own version and
// none is lost; the events staged for a version lost to another writer are dropped by the outbox.
// It returns the version written and the events staged with it.
func (s *Store) Write(ctx context.Context, objectID string, e Edit) (*Profile, []events.Pending, error) {
	for attempt := range s.MaxAttempts {
		cur, err := s.Profile(ctx, objectID)
		if err != nil {
			return nil, nil, err
		}
		next := *cur
		next.Included = slices.Clone(cur.Included)
		if err := e.Apply(&next); err != nil {
			return nil, nil, err
		}
		next.Version = cur.Version + 1
		next.ID, next.Change, next.UpdatedAt = VersionID(objectID, next.Version), e.Change, e.At
		var evs []events.Pending
		if e.Events != nil {
			evs = e.Events(&next)
		}
		if err := e.Outbox.Stage(ctx, Versions, next.ID, evs...); err != nil {
			return nil, nil, err
		}
		next.Events = events.IDs(evs...)
		_, err = s.versions.InsertOne(ctx, &next)
		if mongox.IsDuplicateKey(err) {
			// Another writer took this version: back off a little, more after each loss.
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-time.After(time.Duration(rand.IntN(2+attempt)) * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("store versions: %w", err)
		}
		// The version is written; the head hint only saves later reads a step (they follow the
		// versions past it), so a failure to move it does not fail the write.
		if err := s.advanceHead(ctx, objectID, next.Version); err != nil {
			s.log.Warn("moving a context head hint failed", "object_id", objectID, "version", next.Version, "error", err)
		}
		return &next, evs, nil
	}
	return nil, nil, ErrContention
}

// VersionQuery pages through an object's versions, newest first.
type VersionQuery struct {
	ObjectID string
	// Top is the object's current version, Before a version number cursor: only versions below
	// it (0: from Top).
	Top, Before int
	Limit       int
}

// versionSummary is what a list of versions shows of each.
var versionSummary = bson.D{{Key: "version", Value: 1}, {Key: "change", Value: 1}, {Key: "updated_at", Value: 1}}

// ListVersions lists versions without their content: a version's document is addressed by the
// object and its number (VersionID), so a page is one find of the versions it asks for by id,
// from the newest asked for down. Versions start at 1, or later for an object materialised at a
// later version: the page ends at the first absent one.
func (s *Store) ListVersions(ctx context.Context, q VersionQuery) ([]Profile, error) {
	top := q.Top
	if q.Before > 0 {
		top = min(top, q.Before-1)
	}
	ids := make([]string, max(0, min(q.Limit, top))) // from top down
	for i := range ids {
		ids[i] = VersionID(q.ObjectID, top-i)
	}
	found, err := mongox.FindIn[Profile](ctx, s.versions, ids, options.Find().SetProjection(versionSummary))
	if err != nil {
		return nil, fmt.Errorf("store versions: %w", err)
	}
	byVersion := make(map[int]Profile, len(found))
	for _, p := range found {
		byVersion[p.Version] = p
	}
	out := make([]Profile, 0, len(ids))
	for v := top; v > top-len(ids); v-- {
		p, ok := byVersion[v]
		if !ok {
			break
		}
		out = append(out, p)
	}
	return out, nil
}
