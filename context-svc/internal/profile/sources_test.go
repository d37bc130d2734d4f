package profile_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/svcdev/svc/context-svc/internal/profile"
	"github.com/svcdev/svc/context-svc/internal/store"
)

// TestSourceLimitHoldsUnderConcurrentCreates: counting the sources and then inserting one lets
// every creator that counted below the limit insert (and counting is a scan on FerretDB). Each source claims one of the object's
// MaxSources numbered slots by inserting it, which both backends make atomic, so concurrent
// creators near the limit get exactly the slots that are left.
func TestSourceLimitHoldsUnderConcurrentCreates(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	kind, text, no := profile.KindText, "a note", false
	const left, creators = 4, 16
	for range profile.MaxSources - left {
		if _, _, err := f.svc.CreateSource(ctx, f.t, &profile.NewSource{Kind: &kind, Text: &text, Included: &no}); err != nil {
			t.Fatal(err)
		}
	}
	var created, refused atomic.Int32
	var wg sync.WaitGroup
	for range creators {
		wg.Go(func() {
			_, _, err := f.svc.CreateSource(ctx, f.t, &profile.NewSource{Kind: &kind, Text: &text, Included: &no})
			switch {
			case err == nil:
				created.Add(1)
			case status(err) == http.StatusConflict:
				refused.Add(1)
			default:
				t.Errorf("concurrent create: %v", err)
			}
		})
	}
	wg.Wait()
	all, _, err := f.svc.Store.ListSources(ctx, store.SourcePage{ObjectID: "obj_a", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if created.Load() != left || refused.Load() != creators-left || len(all) != profile.MaxSources {
		t.Fatalf("%d concurrent creates with %d places left: %d created, %d refused, %d sources stored; want %d, %d, %d",
			creators, left, created.Load(), refused.Load(), len(all), left, creators-left, profile.MaxSources)
	}
}
