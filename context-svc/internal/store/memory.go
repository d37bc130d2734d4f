package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// Decision memory is the owner's own work, so it is versioned apart from the context: its writes
// move no context version (which anyone sees on the object and the agent card) and publish no
// event. Version n of an object's memory is the document "object_id:n" of the memory
// collection, inserted once: as with context versions, the insert is the one atomic step that
// decides which of concurrent writers gets n. A head hint per object saves reads; readers step
// forward from it to the first version not written, so a hint left behind is no error. Versions
// are contiguous (a writer inserts n+1 only after reading n), so a page of them is point reads.

// ErrStaleMemory says that a conditional write named a version that is no longer current.
var ErrStaleMemory = errors.New("decision memory is not at that version")

// Memory is one version of an object's decision memory.
type Memory struct {
	ID       string `bson:"_id"` // object_id:version
	ObjectID string `bson:"object_id"`
	Version  int    `bson:"version"`
	// Change is what wrote the version: MemoryPut, MemoryRebuild or MemoryCarried.
	Change    string    `bson:"change"`
	Body      string    `bson:"body"`
	CreatedAt time.Time `bson:"created_at"`
}

// What wrote a decision-memory version.
const (
	MemoryPut     = "put"
	MemoryRebuild = "rebuild"
	// MemoryCarried is the first version of an object whose memory was written while it still
	// shared the context's versions: that memory, carried over.
	MemoryCarried = "carried"
)

// withoutBody leaves out a version's text, which a list of versions does not show.
var withoutBody = bson.D{{Key: "body", Value: 0}}

// MemoryOf reads one version of an object's decision memory, or mongox.ErrNotFound.
func (s *Store) MemoryOf(ctx context.Context, objectID string, version int) (*Memory, error) {
	var m Memory
	if err := mongox.FindOne(ctx, s.memory, mongox.ByID(VersionID(objectID, version)), &m); err != nil {
		return nil, fmt.Errorf("store memory: %w", err)
	}
	return &m, nil
}

// MemoryVersion is the current version of an object's decision memory (0: never written): the
// head hint, then the versions written past it.
func (s *Store) MemoryVersion(ctx context.Context, objectID string) (int, error) {
	var head struct {
		Version int `bson:"version"`
	}
	if err := mongox.FindOne(ctx, s.memoryHeads, mongox.ByID(objectID), &head); err != nil && !errors.Is(err, mongox.ErrNotFound) {
		return 0, fmt.Errorf("store memory heads: %w", err)
	}
	n := head.Version
	for {
		var probe struct {
			ID string `bson:"_id"`
		}
		err := mongox.FindOne(ctx, s.memory, mongox.ByID(VersionID(objectID, n+1)), &probe,
			options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}}))
		if errors.Is(err, mongox.ErrNotFound) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("store memory: %w", err)
		}
		n++
	}
	if n > head.Version {
		s.advanceMemoryHead(ctx, objectID, n)
	}
	return n, nil
}

// Memory reads an object's current decision memory, or mongox.ErrNotFound when it was never
// written.
func (s *Store) Memory(ctx context.Context, objectID string) (*Memory, error) {
	n, err := s.MemoryVersion(ctx, objectID)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, mongox.ErrNotFound
	}
	return s.MemoryOf(ctx, objectID, n)
}

// WriteMemory stores m's body and change as the object's next decision-memory version and
// returns it. With ifMatch, it writes only while the current version is *ifMatch: a stale one,
// or another writer taking the next version first, is ErrStaleMemory, so that of writers holding
// one version exactly one succeeds. Without, a writer that loses the race retries on top.
func (s *Store) WriteMemory(ctx context.Context, objectID string, m Memory, ifMatch *int) (*Memory, error) {
	for attempt := range s.MaxAttempts {
		cur, err := s.MemoryVersion(ctx, objectID)
		if err != nil {
			return nil, err
		}
		if ifMatch != nil && cur != *ifMatch {
			return nil, ErrStaleMemory
		}
		next := m
		next.ObjectID, next.Version = objectID, cur+1
		next.ID = VersionID(objectID, next.Version)
		_, err = s.memory.InsertOne(ctx, &next)
		if mongox.IsDuplicateKey(err) {
			if ifMatch != nil {
				return nil, ErrStaleMemory
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(rand.IntN(2+attempt)) * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("store memory: %w", err)
		}
		s.advanceMemoryHead(ctx, objectID, next.Version)
		return &next, nil
	}
	return nil, ErrContention
}

// CarryMemory stores the memory an object wrote before decision memory had its own versions as
// its version 1, unless a version 1 exists (a concurrent carry or write got there first).
func (s *Store) CarryMemory(ctx context.Context, objectID, body string, at time.Time) error {
	m := Memory{ID: VersionID(objectID, 1), ObjectID: objectID, Version: 1, Change: MemoryCarried, Body: body, CreatedAt: at}
	if _, err := s.memory.InsertOne(ctx, &m); err != nil && !mongox.IsDuplicateKey(err) {
		return fmt.Errorf("store memory: %w", err)
	}
	return nil
}

// MemoryVersions lists up to limit versions of an object's decision memory below version before
// (0: from the current one), newest first, without their text: one point read each.
func (s *Store) MemoryVersions(ctx context.Context, objectID string, before, limit int) ([]Memory, error) {
	top, err := s.MemoryVersion(ctx, objectID)
	if err != nil {
		return nil, err
	}
	if before > 0 {
		top = min(top, before-1) // a cursor past the current version reads from the current one
	}
	out := make([]Memory, 0, max(0, min(limit, top)))
	for v := top; v > 0 && len(out) < limit; v-- {
		var m Memory
		err := mongox.FindOne(ctx, s.memory, mongox.ByID(VersionID(objectID, v)), &m, options.FindOne().SetProjection(withoutBody))
		if err != nil {
			return nil, fmt.Errorf("store memory version %d: %w", v, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// advanceMemoryHead moves the head hint forward (never back). A failure only leaves the hint
// behind, which readers step over, so it is logged, not reported.
func (s *Store) advanceMemoryHead(ctx context.Context, objectID string, version int) {
	if err := advanceHint(ctx, s.memoryHeads, objectID, version); err != nil {
		s.log.Warn("moving a decision-memory head hint failed", "object_id", objectID, "version", version, "error", err)
	}
}
