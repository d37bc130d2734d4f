package store

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/pkg/testkit"
	"github.com/svcdev/svc/pkg/versions"
)

// TestCachedObjectsFollowTheirValidator runs two replicas' stores over one database and one
// Redis: a replica serves its cached fold until a writer on the other replaces the object's
// validator, and then reads the new facts.
func TestCachedObjectsFollowTheirValidator(t *testing.T) {
	t.Parallel()
	env := testkit.Backends(t)
	db := testkit.Database(t, env, "store")
	opts, err := redis.ParseURL(env.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	tokens := versions.New(rdb, testkit.Logger(t), "test:etag:", time.Hour)
	a, b := New(db), New(db)
	a.CacheObjects(tokens, 10)
	b.CacheObjects(tokens, 10)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	o := &Object{ID: "obj_cached", Hash: "svc_cached", Hashes: []string{"svc_cached"}, Visibility: "public",
		MailboxStatus: StatusUnclaimed, Version: 1, Title: "One", CreatedAt: t0, UpdatedAt: t0}
	if err := a.InsertObject(ctx, o); err != nil {
		t.Fatal(err)
	}
	version := func(s *Store) int {
		t.Helper()
		got, err := s.Object(ctx, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		got.Hashes = append(got.Hashes, "svc_mutated") // a caller's change never reaches the cache
		return got.Version
	}
	if v := version(a); v != 1 {
		t.Fatalf("first read: version %d", v)
	}

	// A fact written without replacing the validator is not seen: the read came from the cache.
	if err := b.UpdateProfile(ctx, o.ID, 2, "Two", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if v := version(a); v != 1 {
		t.Fatalf("a read under an unchanged validator folded again: version %d", v)
	}
	// Writers replace it, as every writer of facts does: both replicas read the new fold.
	tokens.Changed(ctx, o.ID)
	if v := version(a); v != 2 {
		t.Fatalf("after the validator changed: version %d, want 2", v)
	}
	if err := b.UpdateProfile(ctx, o.ID, 3, "Three", t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	tokens.Changed(ctx, o.ID)
	if v := version(b); v != 3 {
		t.Fatalf("the writing replica reads version %d, want 3", v)
	}
	if v := version(a); v != 3 {
		t.Fatalf("the other replica reads version %d, want 3", v)
	}
	got, _ := a.Object(ctx, o.ID)
	if len(got.Hashes) != 1 {
		t.Errorf("cached hashes were changed by a caller: %v", got.Hashes)
	}
}
