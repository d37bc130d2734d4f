package profile_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/events"
)

// TestPutMemoryIfMatch: a write naming the current memory version succeeds, one naming an older
// version is 412 and writes nothing; of concurrent writers holding one version, exactly one wins.
func TestPutMemoryIfMatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	m, err := f.svc.PutMemory(ctx, f.t, "first", nil)
	if err != nil {
		t.Fatal(err)
	}
	v := m.Version
	m2, err := f.svc.PutMemory(ctx, f.t, "second", &v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.PutMemory(ctx, f.t, "stale", &v); status(err) != http.StatusPreconditionFailed {
		t.Fatalf("a stale If-Match answered %v, want 412", err)
	}
	if cur, err := f.svc.Memory(ctx, f.t.ObjectID); err != nil || cur.Body != "second" || cur.Version != m2.Version {
		t.Fatalf("memory after a stale write %+v (%v), want the second write", cur, err)
	}
	held := m2.Version
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, refused := 0, 0
	for range 4 {
		wg.Go(func() {
			_, err := f.svc.PutMemory(ctx, f.t, "race", &held)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case status(err) == http.StatusPreconditionFailed:
				refused++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if won != 1 || refused != 3 {
		t.Fatalf("%d writers holding one version won, %d refused; want 1 and 3", won, refused)
	}
}

// TestMemoryWritesAreOwnerOnly: writing and rebuilding decision memory moves its own version
// only: the context version stays, identity-svc hears of nothing, the public reads' validator
// stays and no event is staged.
func TestMemoryWritesAreOwnerOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	p, err := f.svc.PutLLMTxt(ctx, f.t, "# Ada\n\nPublic.")
	if err != nil {
		t.Fatal(err)
	}
	reports, changed := len(f.id.reports), f.svc.ETags.(*validators).changed.Load()
	staged, err := f.db.Collection(events.OutboxCollection).CountDocuments(ctx, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := f.svc.PutMemory(ctx, f.t, "private plans", nil); err != nil || m.Version != 1 {
		t.Fatalf("first memory write %+v (%v), want memory version 1", m, err)
	}
	if m, _, err := f.svc.RebuildMemory(ctx, f.t); err != nil || m.Version != 2 {
		t.Fatalf("rebuild %+v (%v), want memory version 2", m, err)
	}
	cur, err := f.svc.Profile(ctx, f.t.ObjectID)
	if err != nil || cur.Version != p.Version {
		t.Fatalf("context version after memory writes %d (%v), want %d", cur.Version, err, p.Version)
	}
	if len(f.id.reports) != reports || f.svc.ETags.(*validators).changed.Load() != changed {
		t.Errorf("memory writes reported a version to identity-svc (%d → %d) or replaced the public validator",
			reports, len(f.id.reports))
	}
	if n, err := f.db.Collection(events.OutboxCollection).CountDocuments(ctx, map[string]any{}); err != nil || n != staged {
		t.Errorf("memory writes staged events: %d → %d (%v)", staged, n, err)
	}
	versions, err := f.svc.MemoryVersions(ctx, f.t.ObjectID, 0, 10)
	if err != nil || len(versions) != 2 || versions[0].Change != store.MemoryRebuild || versions[1].Change != store.MemoryPut {
		t.Fatalf("memory versions %+v (%v), want the rebuild then the put", versions, err)
	}
	if _, err := f.svc.MemoryAt(ctx, f.t.ObjectID, 3); status(err) != http.StatusNotFound {
		t.Fatalf("an unwritten memory version: %v, want 404", err)
	}
}

// TestMemoryCarriedOver: memory written while it shared the context's versions becomes decision
// memory's version 1 on first use, whatever context writes came after; If-Match then names
// the carried version.
func TestMemoryCarriedOver(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.svc.Profile(ctx, f.t.ObjectID); err != nil { // materialise version 1
		t.Fatal(err)
	}
	st := f.svc.Store.(*store.Store)
	legacy, _, err := st.Write(ctx, f.t.ObjectID, store.Edit{Change: store.ChangeDecisionMemory, At: clock.Now(), Outbox: f.svc.Outbox,
		Apply: func(p *store.Profile) error { p.Memory, p.MemoryVersion = "legacy memory", 2; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.PutLLMTxt(ctx, f.t, "# Later\n"); err != nil {
		t.Fatal(err)
	}
	m, err := f.svc.Memory(ctx, f.t.ObjectID)
	if err != nil || m.Version != 1 || m.Body != "legacy memory" || m.Change != store.MemoryCarried || !m.CreatedAt.Equal(legacy.UpdatedAt) {
		t.Fatalf("carried memory %+v (%v), want version 1 with the legacy text and time", m, err)
	}
	never := 0
	if _, err := f.svc.PutMemory(ctx, f.t, "x", &never); status(err) != http.StatusPreconditionFailed {
		t.Fatalf("If-Match 0 on carried memory: %v, want 412", err)
	}
	one := 1
	if m, err := f.svc.PutMemory(ctx, f.t, "new", &one); err != nil || m.Version != 2 {
		t.Fatalf("If-Match 1 on carried memory: %+v (%v), want version 2", m, err)
	}
}
