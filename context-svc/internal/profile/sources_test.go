package profile_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
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

// TestDeleteSourceFreesItsPlace: at the limit, deleting an included source frees one place (the
// next create succeeds, the one after is 409), leaves it out of the profile in a new version
// whose context.source_changed says deleted, and drops it from the list; an unknown id is 404.
func TestDeleteSourceFreesItsPlace(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	kind, text, no := profile.KindText, "a note", false
	first, _, err := f.svc.CreateSource(ctx, f.t, &profile.NewSource{Kind: &kind, Text: &text}) // included
	if err != nil {
		t.Fatal(err)
	}
	for range profile.MaxSources - 1 {
		if _, _, err := f.svc.CreateSource(ctx, f.t, &profile.NewSource{Kind: &kind, Text: &text, Included: &no}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := f.svc.CreateSource(ctx, f.t, &profile.NewSource{Kind: &kind, Text: &text, Included: &no}); status(err) != http.StatusConflict {
		t.Fatalf("create at the limit: %v, want 409", err)
	}
	p, err := f.svc.DeleteSource(ctx, f.t, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(p.Included, first.ID) || p.Change != store.ChangeSources {
		t.Errorf("version after the delete: change %s, included %v; want sources, without %s", p.Change, p.Included, first.ID)
	}
	evs := f.outbox(t, store.Versions, p.ID)
	if len(evs) != 2 || !strings.Contains(evs[1].Payload, `"change":"deleted"`) {
		t.Errorf("events of the delete's version: %v; want context.updated and a source_changed that says deleted", types(evs))
	}
	if _, err := f.svc.DeleteSource(ctx, f.t, first.ID); status(err) != http.StatusNotFound {
		t.Errorf("second delete: %v, want 404", err)
	}
	if _, _, err := f.svc.CreateSource(ctx, f.t, &profile.NewSource{Kind: &kind, Text: &text, Included: &no}); err != nil {
		t.Fatalf("create after the delete: %v", err)
	}
	if _, _, err := f.svc.CreateSource(ctx, f.t, &profile.NewSource{Kind: &kind, Text: &text, Included: &no}); status(err) != http.StatusConflict {
		t.Fatalf("create past the limit again: %v, want 409", err)
	}
	view, err := f.svc.Context(ctx, f.t.ObjectID)
	if err != nil || len(view.Sources) != profile.MaxSources || view.Sources[0].ID == first.ID {
		t.Fatalf("context after the delete: %d sources, %v; want %d without the deleted one", len(view.Sources), err, profile.MaxSources)
	}
}
