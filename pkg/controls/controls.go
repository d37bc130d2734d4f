// Package controls makes an owner's controls (a sender block, an admission rule) bind at their
// 200 in the services that enforce them from a projection. The owner raises a per-object control
// version in the shared Redis before it answers and carries it in the control's event; an
// enforcing service records in Redis the version its projection has applied, and a guarded write
// compares the two with one MGET. While the projection is behind, the answer comes from the owner
// itself, synchronously (cached per version), or the write is refused with 503 and Retry-After.
package controls

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/pkg/apierr"
)

// The kinds of control, each with its owner.
const (
	// Blocks are the sender blocks of an object (mailbox-svc), enforced by feed-svc and graph-svc.
	Blocks = "blocks"
	// Rules are the admission rules of an object (context-svc), enforced by mailbox-svc.
	Rules = "rules"
)

// Key is the shared Redis key of an object's control version of kind: written by the owner only.
func Key(kind, objectID string) string { return "svc:control:" + kind + ":" + objectID }

// AppliedKey is the shared Redis key of the control version of kind that service's projection of
// the object has applied: written by that service's consumer only.
func AppliedKey(service, kind, objectID string) string {
	return "svc:control-applied:" + service + ":" + kind + ":" + objectID
}

// raise sets KEYS[1] to ARGV[1] unless it already holds as much: versions only move forward, so a
// redelivered or reordered older one never lowers them.
var raise = redis.NewScript(`
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
local v = tonumber(ARGV[1])
if v > cur then redis.call('SET', KEYS[1], ARGV[1]) end
return 0`)

// Versions reads and writes control versions in the shared Redis.
type Versions struct{ rdb *redis.Client }

// New returns the control versions kept in rdb.
func New(rdb *redis.Client) *Versions { return &Versions{rdb: rdb} }

// Next takes the next control version of the object, for an owner whose control has no version of
// its own (a block): the version goes into the control's event, and the write starts only once it
// is taken, so an enforcing service sees the control's version before the control's 200.
func (v *Versions) Next(ctx context.Context, kind, objectID string) (int64, error) {
	n, err := v.rdb.Incr(ctx, Key(kind, objectID)).Result()
	if err != nil {
		return 0, fmt.Errorf("control version %s: %w", kind, err)
	}
	return n, nil
}

// Raise moves the object's control version up to version, for an owner whose control has its own
// increasing version (a context version); it is called after the write and before the 200.
func (v *Versions) Raise(ctx context.Context, kind, objectID string, version int64) error {
	if err := raise.Run(ctx, v.rdb, []string{Key(kind, objectID)}, version).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("raise control version %s: %w", kind, err)
	}
	return nil
}

// Applied records that service's projection of the object has applied the control's version
// (consumers call it after the projection's write); 0 records nothing.
func (v *Versions) Applied(ctx context.Context, service, kind, objectID string, version int64) error {
	if version <= 0 {
		return nil
	}
	if err := raise.Run(ctx, v.rdb, []string{AppliedKey(service, kind, objectID)}, version).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("record applied control version %s: %w", kind, err)
	}
	return nil
}

// Behind returns the object's current control version and whether service's projection has not
// applied it yet, in one MGET. An object without a version has had no control since Redis kept
// them: its projection is current.
func (v *Versions) Behind(ctx context.Context, service, kind, objectID string) (current int64, behind bool, err error) {
	vals, err := v.rdb.MGet(ctx, Key(kind, objectID), AppliedKey(service, kind, objectID)).Result()
	if err != nil {
		return 0, false, fmt.Errorf("read control versions %s: %w", kind, err)
	}
	current, applied := number(vals[0]), number(vals[1])
	return current, current > applied, nil
}

func number(v any) int64 {
	s, _ := v.(string)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// Guard answers one service's question about a control of kind (is this sender blocked, what
// do these rules admit) so that it holds from the control's 200: from the service's projection
// while that has applied the object's control version, else from the owner, whose answers it
// keeps per version in this process.
type Guard[V any] struct {
	versions *Versions
	service  string
	kind     string
	answers  *lru.Cache[string, answer[V]]
}

type answer[V any] struct {
	version int64
	value   V
}

// NewGuard returns service's guard of the controls of kind, keeping up to size owner answers.
func NewGuard[V any](versions *Versions, service, kind string, size int) *Guard[V] {
	answers, err := lru.New[string, answer[V]](max(size, 1))
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &Guard[V]{versions: versions, service: service, kind: kind, answers: answers}
}

// Get answers the question key about objectID's control: projection reads this service's
// projection, owner asks the owning service. When Redis cannot be read the owner is asked; when
// the owner must be asked and cannot answer, the write is refused with 503 and Retry-After,
// rather than judged by a projection that may not have seen the control yet.
func (g *Guard[V]) Get(ctx context.Context, objectID, key string, projection, owner func(context.Context) (V, error)) (V, error) {
	if g == nil {
		return projection(ctx)
	}
	current, behind, err := g.versions.Behind(ctx, g.service, g.kind, objectID)
	switch {
	case err != nil:
		current, behind = -1, true // ask the owner, and keep nothing
	case !behind:
		return projection(ctx)
	}
	if a, ok := g.answers.Get(key); ok && current >= 0 && a.version == current {
		return a.value, nil
	}
	v, err := owner(ctx)
	if err != nil {
		var zero V
		if e := apierr.As(err); e.Status >= 400 && e.Status < 500 {
			return zero, err
		}
		return zero, apierr.Retryable(fmt.Errorf("ask the owner of %s control: %w", g.kind, err))
	}
	if current >= 0 {
		g.answers.Add(key, answer[V]{version: current, value: v})
	}
	return v, nil
}
