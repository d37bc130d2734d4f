package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/mongox"
)

func textSource(id, objectID string) *store.Source {
	return &store.Source{ID: id, ObjectID: objectID, Kind: "text", Title: id, Text: "about " + id, CreatedAt: clock.Now()}
}

// sourceIDs pages through an object's sources with limit and returns their ids in order, and
// how many pages it took.
func sourceIDs(t *testing.T, st *store.Store, objectID string, limit int) ([]string, int) {
	t.Helper()
	var ids []string
	var after int64
	for pages := 1; ; pages++ {
		page, next, err := st.ListSources(context.Background(), store.SourcePage{ObjectID: objectID, After: after, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		for _, src := range page {
			ids = append(ids, src.ID)
		}
		if next == 0 {
			return ids, pages
		}
		if next <= after {
			t.Fatalf("page after %d resumes at %d: not forward", after, next)
		}
		after = next
	}
}

// TestSourceListPagesOldestFirstSkippingDeleted: an object's sources page oldest first from its
// list, another object's never among them; a deleted source is skipped and its slot is free
// again, so that a create at the limit succeeds after a delete and the one after is refused.
func TestSourceListPagesOldestFirstSkippingDeleted(t *testing.T) {
	t.Parallel()
	st, outbox := newStore(t)
	ctx := context.Background()
	const limit = 5
	var want []string
	for i := range limit {
		id := fmt.Sprintf("src_%d", i)
		if err := st.InsertSource(ctx, textSource(id, "obj_p"), limit, outbox); err != nil {
			t.Fatal(err)
		}
		if err := st.InsertSource(ctx, textSource(id+"_other", "obj_q"), limit, outbox); err != nil {
			t.Fatal(err)
		}
		want = append(want, id)
	}
	if got, pages := sourceIDs(t, st, "obj_p", 2); !slices.Equal(got, want) || pages != 3 {
		t.Fatalf("sources in pages of 2: got %v in %d pages, want %v in 3", got, pages, want)
	}
	if err := st.InsertSource(ctx, textSource("src_over", "obj_p"), limit, outbox); !errors.Is(err, store.ErrSourceLimit) {
		t.Fatalf("create past the limit: got %v, want ErrSourceLimit", err)
	}
	if _, err := st.DeleteSource(ctx, "obj_q", "src_1"); !errors.Is(err, mongox.ErrNotFound) {
		t.Fatalf("delete through another object: got %v, want ErrNotFound", err)
	}
	for _, id := range []string{"src_1", "src_3"} {
		if _, err := st.DeleteSource(ctx, "obj_p", id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.DeleteSource(ctx, "obj_p", "src_1"); !errors.Is(err, mongox.ErrNotFound) {
		t.Fatalf("second delete: got %v, want ErrNotFound", err)
	}
	for _, id := range []string{"src_5", "src_6"} {
		if err := st.InsertSource(ctx, textSource(id, "obj_p"), limit, outbox); err != nil {
			t.Fatalf("create %s after deletes: %v", id, err)
		}
	}
	if err := st.InsertSource(ctx, textSource("src_7", "obj_p"), limit, outbox); !errors.Is(err, store.ErrSourceLimit) {
		t.Fatalf("create past the limit after deletes: got %v, want ErrSourceLimit", err)
	}
	want = []string{"src_0", "src_2", "src_4", "src_5", "src_6"}
	if got, _ := sourceIDs(t, st, "obj_p", 2); !slices.Equal(got, want) {
		t.Fatalf("sources after deletes: got %v, want %v", got, want)
	}
}

// TestSourcePageReadsABudget: a page reads at most four list entries per source asked for, so a
// list of deleted sources comes back in short pages with a cursor, never read whole at once.
func TestSourcePageReadsABudget(t *testing.T) {
	t.Parallel()
	st, outbox := newStore(t)
	ctx := context.Background()
	for i := range 12 {
		id := fmt.Sprintf("src_%02d", i)
		if err := st.InsertSource(ctx, textSource(id, "obj_b"), 20, outbox); err != nil {
			t.Fatal(err)
		}
		if i < 10 {
			if _, err := st.DeleteSource(ctx, "obj_b", id); err != nil {
				t.Fatal(err)
			}
		}
	}
	page, next, err := st.ListSources(ctx, store.SourcePage{ObjectID: "obj_b", Limit: 1})
	if err != nil || len(page) != 0 || next != 4 {
		t.Fatalf("first page of 1 over 10 deleted: got %d sources, next %d, %v; want none, next 4", len(page), next, err)
	}
	if got, _ := sourceIDs(t, st, "obj_b", 1); !slices.Equal(got, []string{"src_10", "src_11"}) {
		t.Fatalf("sources: got %v, want src_10, src_11", got)
	}
}

// TestVersionsPageNewestFirst: versions list from the current one down, one point read each,
// below a cursor, and end at the first version.
func TestVersionsPageNewestFirst(t *testing.T) {
	t.Parallel()
	st, outbox := newStore(t)
	ctx := context.Background()
	materialise(t, st, "obj_v")
	for range 4 {
		if _, _, err := st.Write(ctx, "obj_v", store.Edit{Change: store.ChangeLLMTxt, At: clock.Now(), Outbox: outbox,
			Apply: func(*store.Profile) error { return nil }}); err != nil {
			t.Fatal(err)
		}
	}
	versions := func(before, limit int) []int {
		page, err := st.ListVersions(ctx, store.VersionQuery{ObjectID: "obj_v", Top: 5, Before: before, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for _, p := range page {
			out = append(out, p.Version)
			if p.LLMTxt != "" {
				t.Errorf("version %d listed with its text", p.Version)
			}
		}
		return out
	}
	for _, c := range []struct {
		before, limit int
		want          []int
	}{{0, 2, []int{5, 4}}, {4, 2, []int{3, 2}}, {2, 5, []int{1}}, {1, 5, nil}, {99, 1, []int{5}}} {
		if got := versions(c.before, c.limit); !slices.Equal(got, c.want) {
			t.Errorf("versions below %d, limit %d: got %v, want %v", c.before, c.limit, got, c.want)
		}
	}
}

// TestLinksAndDecisionsAreListed: links page newest first from their list; a decision
// redelivered is listed once, and decisions come newest first.
func TestLinksAndDecisionsAreListed(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	for i := range 3 {
		l := &store.Link{ID: fmt.Sprintf("lnk_%d", i), ObjectID: "obj_l", Title: "t", SourceIDs: []string{"src_1"}, CreatedAt: clock.Now()}
		if err := st.InsertLink(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	page, next, err := st.ListLinks(ctx, store.LinkPage{ObjectID: "obj_l", Limit: 2})
	if err != nil || len(page) != 2 || page[0].ID != "lnk_2" || page[1].ID != "lnk_1" || next == 0 {
		t.Fatalf("first page of links: %+v, next %d, %v; want lnk_2, lnk_1 and a next page", page, next, err)
	}
	page, next, err = st.ListLinks(ctx, store.LinkPage{ObjectID: "obj_l", Before: next, Limit: 2})
	if err != nil || len(page) != 1 || page[0].ID != "lnk_0" || next != 0 {
		t.Fatalf("second page of links: %+v, next %d, %v; want lnk_0 and no next page", page, next, err)
	}
	base := time.Now().UTC().Truncate(time.Millisecond)
	for i, node := range []string{"n1", "n2", "n1"} {
		d := &store.Decision{ObjectID: "obj_d", ThreadID: "thr_1", NodeID: node, Title: node, CreatedAt: base.Add(time.Duration(i) * time.Minute)}
		if err := st.RecordDecision(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.RecentDecisions(ctx, "obj_d", 10)
	if err != nil || len(got) != 2 || got[0].NodeID != "n2" || got[1].NodeID != "n1" {
		t.Fatalf("decisions: %+v, %v; want n2 then n1, once each", got, err)
	}
}

// TestBackfillListsOnce: sources, slots, links and decisions stored by a release before the
// lists are listed by the backfill: a source keeps the slot it claimed (deleting it frees that
// slot) and one stored before slots claims a free one, so the limit still holds; a second run
// finds the marker and does nothing.
func TestBackfillListsOnce(t *testing.T) {
	t.Parallel()
	st, outbox, db := newStoreDB(t)
	ctx := context.Background()
	const limit = 3
	// The previous release: two sources with slots 1 and 2 (claimed at count+1), one stored
	// before slots, a link and two decisions in their own collections.
	old := []*store.Source{textSource("src_a", "obj_o"), textSource("src_b", "obj_o"), textSource("src_c", "obj_o")}
	for i, src := range old {
		if _, err := db.Collection(store.Sources).InsertOne(ctx, src); err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			slot := bson.D{{Key: "_id", Value: fmt.Sprintf("obj_o:%d", i+1)}, {Key: "object_id", Value: "obj_o"}, {Key: "source_id", Value: src.ID}}
			if _, err := db.Collection(store.SourceSlots).InsertOne(ctx, slot); err != nil {
				t.Fatal(err)
			}
		}
	}
	link := store.Link{ID: "lnk_old", ObjectID: "obj_o", Title: "old", SourceIDs: []string{"src_a"}, CreatedAt: clock.Now()}
	if _, err := db.Collection(store.Links).InsertOne(ctx, link); err != nil {
		t.Fatal(err)
	}
	for _, node := range []string{"n1", "n2"} {
		d := store.Decision{ID: "obj_o:" + node, ObjectID: "obj_o", NodeID: node, Title: node, CreatedAt: clock.Now()}
		if _, err := db.Collection(store.Decisions).InsertOne(ctx, d); err != nil {
			t.Fatal(err)
		}
	}

	n, err := st.BackfillLists(ctx, limit)
	if err != nil || n != (store.Listed{Sources: 3, Links: 1, Decisions: 2}) {
		t.Fatalf("backfill: %+v, %v; want 3 sources, 1 link, 2 decisions", n, err)
	}
	if got, _ := sourceIDs(t, st, "obj_o", 10); !slices.Equal(got, []string{"src_a", "src_b", "src_c"}) {
		t.Fatalf("sources after the backfill: %v", got)
	}
	if err := st.InsertSource(ctx, textSource("src_d", "obj_o"), limit, outbox); !errors.Is(err, store.ErrSourceLimit) {
		t.Fatalf("create with the three old sources: got %v, want ErrSourceLimit", err)
	}
	if _, err := st.DeleteSource(ctx, "obj_o", "src_b"); err != nil {
		t.Fatal(err)
	}
	if err := st.InsertSource(ctx, textSource("src_d", "obj_o"), limit, outbox); err != nil {
		t.Fatalf("create after deleting an old source: %v", err)
	}
	links, _, err := st.ListLinks(ctx, store.LinkPage{ObjectID: "obj_o", Limit: 10})
	if err != nil || len(links) != 1 || links[0].ID != "lnk_old" {
		t.Fatalf("links after the backfill: %+v, %v", links, err)
	}
	if ds, err := st.RecentDecisions(ctx, "obj_o", 10); err != nil || len(ds) != 2 {
		t.Fatalf("decisions after the backfill: %+v, %v", ds, err)
	}
	if n, err := st.BackfillLists(ctx, limit); err != nil || n != (store.Listed{}) {
		t.Fatalf("second backfill: %+v, %v; want nothing", n, err)
	}
	if got, _ := sourceIDs(t, st, "obj_o", 10); !slices.Equal(got, []string{"src_a", "src_c", "src_d"}) {
		t.Fatalf("sources at the end: %v", got)
	}
}

// TestLoadSourcesAsCreatesStoreThem: sources loaded in bulk take the slots and list positions a
// create would, so the list pages them in order and the limit counts them.
func TestLoadSourcesAsCreatesStoreThem(t *testing.T) {
	t.Parallel()
	st, outbox := newStore(t)
	ctx := context.Background()
	var want []string
	for part := range 2 {
		var srcs []store.Source
		for i := range 3 {
			id := fmt.Sprintf("src_%d_%d", part, i)
			srcs = append(srcs, *textSource(id, "obj_load"))
			want = append(want, id)
		}
		if err := st.LoadSources(ctx, srcs); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := sourceIDs(t, st, "obj_load", 4); !slices.Equal(got, want) {
		t.Fatalf("loaded sources: got %v, want %v", got, want)
	}
	if err := st.InsertSource(ctx, textSource("src_new", "obj_load"), 7, outbox); err != nil {
		t.Fatalf("create with one place left: %v", err)
	}
	if err := st.InsertSource(ctx, textSource("src_over", "obj_load"), 7, outbox); !errors.Is(err, store.ErrSourceLimit) {
		t.Fatalf("create past the limit: got %v, want ErrSourceLimit", err)
	}
}
