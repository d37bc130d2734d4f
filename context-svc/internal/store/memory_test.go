package store_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/mongox"
)

// TestMemoryVersionsAreTheirOwn: decision memory starts at version 0 whatever the context
// version; concurrent unconditional writes each get their own version; of concurrent writers
// holding one version with If-Match exactly one wins; a page of versions leaves out the text,
// and a cursor past the current version reads from the current one.
func TestMemoryVersionsAreTheirOwn(t *testing.T) {
	t.Parallel()
	st, outbox := newStore(t)
	ctx := context.Background()
	materialise(t, st, "obj_m")
	if _, _, err := st.Write(ctx, "obj_m", store.Edit{Change: store.ChangeLLMTxt, At: clock.Now(), Outbox: outbox,
		Apply: func(p *store.Profile) error { p.LLMTxt = "# Grace\n"; return nil }}); err != nil {
		t.Fatal(err)
	}
	if n, err := st.MemoryVersion(ctx, "obj_m"); err != nil || n != 0 {
		t.Fatalf("memory version before any memory write: %d (%v), want 0", n, err)
	}
	if _, err := st.Memory(ctx, "obj_m"); !errors.Is(err, mongox.ErrNotFound) {
		t.Fatalf("memory before any write: %v, want ErrNotFound", err)
	}

	const writers = 8
	got := make([]int, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			m, err := st.WriteMemory(ctx, "obj_m", store.Memory{Change: store.MemoryPut, Body: "text", CreatedAt: clock.Now()}, nil)
			if err != nil {
				t.Errorf("writer %d: %v", i, err)
				return
			}
			got[i] = m.Version
		})
	}
	wg.Wait()
	slices.Sort(got)
	for i, v := range got {
		if v != i+1 {
			t.Fatalf("versions of concurrent memory writes: %v, want each of 1..%d once", got, writers)
		}
	}
	if p, err := st.Profile(ctx, "obj_m"); err != nil || p.Version != 2 {
		t.Fatalf("context version after memory writes: %+v (%v), want 2 (unmoved)", p, err)
	}

	held := writers
	won, stale := 0, 0
	var mu sync.Mutex
	for range 4 {
		wg.Go(func() {
			_, err := st.WriteMemory(ctx, "obj_m", store.Memory{Change: store.MemoryPut, Body: "race", CreatedAt: clock.Now()}, &held)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, store.ErrStaleMemory):
				stale++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if won != 1 || stale != 3 {
		t.Fatalf("%d conditional writers holding one version won, %d were stale; want 1 and 3", won, stale)
	}
	if m, err := st.Memory(ctx, "obj_m"); err != nil || m.Version != writers+1 || m.Body != "race" {
		t.Fatalf("current memory %+v (%v), want version %d", m, err, writers+1)
	}

	page, err := st.MemoryVersions(ctx, "obj_m", 0, 3)
	if err != nil || len(page) != 3 || page[0].Version != writers+1 || page[2].Version != writers-1 || page[0].Body != "" {
		t.Fatalf("newest page of versions %+v (%v), want %d..%d without text", page, err, writers+1, writers-1)
	}
	page, err = st.MemoryVersions(ctx, "obj_m", 3, 10)
	if err != nil || len(page) != 2 || page[0].Version != 2 || page[1].Version != 1 {
		t.Fatalf("page below version 3 %+v (%v), want 2 and 1", page, err)
	}
	page, err = st.MemoryVersions(ctx, "obj_m", 1_000_000, 1)
	if err != nil || len(page) != 1 || page[0].Version != writers+1 {
		t.Fatalf("page below a cursor past the current version %+v (%v), want the current version", page, err)
	}
}

// TestCarryMemoryOnce: carrying memory over stores version 1 once; a second carry (another
// replica's) changes nothing.
func TestCarryMemoryOnce(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := st.CarryMemory(ctx, "obj_c", "old memory", at); err != nil {
		t.Fatal(err)
	}
	if err := st.CarryMemory(ctx, "obj_c", "other", at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	m, err := st.Memory(ctx, "obj_c")
	if err != nil || m.Version != 1 || m.Body != "old memory" || m.Change != store.MemoryCarried || !m.CreatedAt.Equal(at) {
		t.Fatalf("carried memory %+v (%v), want version 1 with the first carry's text and time", m, err)
	}
}
