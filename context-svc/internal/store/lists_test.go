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
	var after string
	for pages := 1; ; pages++ {
		page, next, err := st.ListSources(context.Background(), store.SourcePage{ObjectID: objectID, After: after, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		for _, src := range page {
			ids = append(ids, src.ID)
		}
		if next == "" {
			return ids, pages
		}
		if next <= after {
			t.Fatalf("page after %q resumes at %q: not forward", after, next)
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

// TestSourcePageSkipsEntriesWithoutSource: an entry of the range whose source was never stored
// (a create stopped between its writes) is skipped, and the page after it goes on.
func TestSourcePageSkipsEntriesWithoutSource(t *testing.T) {
	t.Parallel()
	st, outbox, db := newStoreDB(t)
	ctx := context.Background()
	for i := range 3 {
		if err := st.InsertSource(ctx, textSource(fmt.Sprintf("src_%02d", i), "obj_b"), 20, outbox); err != nil {
			t.Fatal(err)
		}
	}
	ghost := bson.D{{Key: "_id", Value: mongox.Key("obj_b", "src", "src_01a")}, {Key: "v", Value: "src_01a"}}
	if _, err := db.Collection(store.Ranges).InsertOne(ctx, ghost); err != nil {
		t.Fatal(err)
	}
	page, next, err := st.ListSources(ctx, store.SourcePage{ObjectID: "obj_b", Limit: 2, After: "src_00"})
	if err != nil || len(page) != 1 || page[0].ID != "src_01" || next != "src_01a" {
		t.Fatalf("page of 2 after src_00 over a ghost: got %v, next %q, %v; want src_01, next src_01a", page, next, err)
	}
	if got, _ := sourceIDs(t, st, "obj_b", 1); !slices.Equal(got, []string{"src_00", "src_01", "src_02"}) {
		t.Fatalf("sources: got %v, want src_00, src_01, src_02", got)
	}
}

// TestVersionsPageNewestFirst: versions list from the current one down, one find a page,
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
	if err != nil || len(page) != 2 || page[0].ID != "lnk_2" || page[1].ID != "lnk_1" || next != "lnk_1" {
		t.Fatalf("first page of links: %+v, next %q, %v; want lnk_2, lnk_1 and a next page", page, next, err)
	}
	page, next, err = st.ListLinks(ctx, store.LinkPage{ObjectID: "obj_l", Before: next, Limit: 2})
	if err != nil || len(page) != 1 || page[0].ID != "lnk_0" || next != "" {
		t.Fatalf("second page of links: %+v, next %q, %v; want lnk_0 and no next page", page, next, err)
	}
	base := time.Now().UTC().Truncate(time.Millisecond)
	for i, node := range []string{"n1", "n2", "n1"} {
		d := &store.Decision{ObjectID: "obj_d", ThreadID: "thr_1", NodeID: node, Title: node, CreatedAt: base.Add(time.Duration(i) * time.Minute)}
		if err := st.RecordDecision(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	// The decision of n1 made at base, redelivered.
	if err := st.RecordDecision(ctx, &store.Decision{ObjectID: "obj_d", ThreadID: "thr_1", NodeID: "n1", Title: "n1", CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	got, err := st.RecentDecisions(ctx, "obj_d", 10)
	if err != nil || len(got) != 3 || got[0].NodeID != "n1" || got[1].NodeID != "n2" || got[2].NodeID != "n1" || !got[2].CreatedAt.Equal(base) {
		t.Fatalf("decisions: %+v, %v; want n1, n2, n1 newest first, the redelivered one once", got, err)
	}
}

// TestUpgradeCarriesEarlierLayoutsOverOnce: sources, slots, links and decisions stored by the
// releases before the ranges (in their collections, and decisions only in a mongox.Log list) are
// carried over: a source keeps the slot it claimed (deleting it frees that slot) and one stored
// before slots claims a free one, so the limit still holds; the old lists are dropped; a second
// run finds the marker and does nothing.
func TestUpgradeCarriesEarlierLayoutsOverOnce(t *testing.T) {
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

	// The release of the lists: a decision only in its object's list, with the list's head and
	// key marker.
	listed := store.Decision{ID: "obj_o:n3", ObjectID: "obj_o", NodeID: "n3", Title: "n3", CreatedAt: clock.Now().Add(time.Minute)}
	for _, doc := range []bson.D{
		{{Key: "_id", Value: "dec:obj_o#1"}, {Key: "seq", Value: 1}, {Key: "key", Value: "obj_o:n3"}, {Key: "at", Value: clock.Now()}, {Key: "v", Value: listed}},
		{{Key: "_id", Value: "dec:obj_o#head"}, {Key: "seq", Value: 1}},
		{{Key: "_id", Value: "dec:obj_o@obj_o:n3"}, {Key: "seq", Value: 1}},
		{{Key: "_id", Value: "lnk:obj_o#1"}, {Key: "seq", Value: 1}, {Key: "v", Value: link}},
	} {
		if _, err := db.Collection(store.Lists).InsertOne(ctx, doc); err != nil {
			t.Fatal(err)
		}
	}

	n, err := st.Upgrade(ctx, limit)
	if err != nil || n != (store.Carried{Sources: 3, Links: 1, Decisions: 3}) {
		t.Fatalf("upgrade: %+v, %v; want 3 sources, 1 link, 3 decisions", n, err)
	}
	if names, err := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: store.Lists}}); err != nil || len(names) != 0 {
		t.Fatalf("the old lists are still there: %v, %v", names, err)
	}
	if got, _ := sourceIDs(t, st, "obj_o", 10); !slices.Equal(got, []string{"src_a", "src_b", "src_c"}) {
		t.Fatalf("sources after the upgrade: %v", got)
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
		t.Fatalf("links after the upgrade: %+v, %v", links, err)
	}
	if ds, err := st.RecentDecisions(ctx, "obj_o", 10); err != nil || len(ds) != 3 || ds[0].NodeID != "n3" {
		t.Fatalf("decisions after the upgrade: %+v, %v; want n3 first of 3", ds, err)
	}
	if n, err := st.Upgrade(ctx, limit); err != nil || n != (store.Carried{}) {
		t.Fatalf("second upgrade: %+v, %v; want nothing", n, err)
	}
	if got, _ := sourceIDs(t, st, "obj_o", 10); !slices.Equal(got, []string{"src_a", "src_c", "src_d"}) {
		t.Fatalf("sources at the end: %v", got)
	}
}
