package mongox_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

type item struct {
	Title string `bson:"title"`
}

// TestLogPages: entries come back newest first, page after page, each position once, and the
// length counts every append.
func TestLogPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := mongox.NewLog(testkit.Database(t, testkit.Backends(t), "mongox").Collection("log"))
	for i := 1; i <= 7; i++ {
		seq, err := mongox.Append(ctx, log, "feed", item{Title: fmt.Sprint("item ", i)})
		if err != nil || seq != int64(i) {
			t.Fatalf("append %d: seq %d, %v", i, seq, err)
		}
	}
	if _, err := mongox.Append(ctx, log, "other", item{Title: "elsewhere"}); err != nil {
		t.Fatal(err)
	}
	var titles []string
	before := int64(0)
	for pages := 0; ; pages++ {
		page, next, err := mongox.Page[item](ctx, log, "feed", before, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page {
			titles = append(titles, e.Value.Title)
		}
		if next == 0 {
			break
		}
		if pages > 3 {
			t.Fatal("pages do not end")
		}
		before = next
	}
	want := []string{"item 7", "item 6", "item 5", "item 4", "item 3", "item 2", "item 1"}
	if !slices.Equal(titles, want) {
		t.Fatalf("titles %q, want %q", titles, want)
	}
	if n, err := log.Len(ctx, "feed"); err != nil || n != 7 {
		t.Fatalf("len %d, %v; want 7", n, err)
	}
	if page, next, err := mongox.Page[item](ctx, log, "empty", 0, 10); err != nil || len(page) != 0 || next != 0 {
		t.Fatalf("empty list: %v, %d, %v", page, next, err)
	}
}

// TestLogConcurrentAppends: writers racing for positions each get one of their own, with no gap.
func TestLogConcurrentAppends(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := mongox.NewLog(testkit.Database(t, testkit.Backends(t), "mongox").Collection("log"))
	var mu sync.Mutex
	var seqs []int64
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			seq, err := mongox.Append(ctx, log, "busy", item{Title: fmt.Sprint(i)})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			seqs = append(seqs, seq)
			mu.Unlock()
		})
	}
	wg.Wait()
	wantEveryPosition(t, seqs)
	if n, err := log.Len(ctx, "busy"); err != nil || n != 16 {
		t.Fatalf("len %d, %v; want 16", n, err)
	}
}

// TestLogAppendOnce: a key is appended once, also when a crash lost its marker.
func TestLogAppendOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testkit.Database(t, testkit.Backends(t), "mongox")
	log := mongox.NewLog(db.Collection("log"))
	seq, added, err := mongox.AppendOnce(ctx, log, "events", "ev_1", item{Title: "first"})
	if err != nil || !added || seq != 1 {
		t.Fatalf("first: %d %v %v", seq, added, err)
	}
	if _, err := mongox.Append(ctx, log, "events", item{Title: "second"}); err != nil {
		t.Fatal(err)
	}
	seq, added, err = mongox.AppendOnce(ctx, log, "events", "ev_1", item{Title: "again"})
	if err != nil || added || seq != 1 {
		t.Fatalf("redelivery: %d %v %v", seq, added, err)
	}
	// A crash between the entry and its marker's completion: the claim says 0, the entry is found.
	if _, err := db.Collection("log").UpdateOne(ctx, bson.D{{Key: "_id", Value: "events@ev_1"}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "seq", Value: 0}}}}); err != nil {
		t.Fatal(err)
	}
	seq, added, err = mongox.AppendOnce(ctx, log, "events", "ev_1", item{Title: "after crash"})
	if err != nil || added || seq != 1 {
		t.Fatalf("after a lost marker: %d %v %v", seq, added, err)
	}
	if n, _ := log.Len(ctx, "events"); n != 2 {
		t.Fatalf("len %d, want 2", n)
	}
	e, err := mongox.Get[item](ctx, log, "events", 1)
	if err != nil || e.Value.Title != "first" || e.Key != "ev_1" {
		t.Fatalf("entry 1: %+v %v", e, err)
	}
	// A crash before the entry: the claim says 0 and no entry has the key: it is appended now.
	if err := mongox.InsertOnce(ctx, db.Collection("log"), bson.D{{Key: "_id", Value: "events@ev_2"}, {Key: "seq", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	seq, added, err = mongox.AppendOnce(ctx, log, "events", "ev_2", item{Title: "claimed"})
	if err != nil || !added || seq != 3 {
		t.Fatalf("after a lost entry: %d %v %v", seq, added, err)
	}
	seq, added, err = mongox.AppendOnce(ctx, log, "events", "ev_2", item{Title: "claimed again"})
	if err != nil || added || seq != 3 {
		t.Fatalf("redelivery after a lost entry: %d %v %v", seq, added, err)
	}
}

// TestLogAppendOnceCostsNoScan: a new key costs a handful of commands, however long the list.
func TestLogAppendOnceCostsNoScan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var commands atomic.Int64
	env := testkit.Backends(t)
	testkit.Database(t, env, "mongox") // dropped at the end
	client, db, err := mongox.Connect(ctx, env.MongoURI, env.Name+"_mongox",
		&event.CommandMonitor{Started: func(context.Context, *event.CommandStartedEvent) { commands.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	log := mongox.NewLog(db.Collection("log"))
	for i := range 300 {
		if _, err := mongox.Append(ctx, log, "events", item{Title: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	commands.Store(0)
	if _, added, err := mongox.AppendOnce(ctx, log, "events", "ev_new", item{Title: "new"}); err != nil || !added {
		t.Fatalf("append once: %v %v", added, err)
	}
	if n := commands.Load(); n > 10 {
		t.Errorf("a new key cost %d commands on a list of 300, want at most 10", n)
	}
}

// TestLogPageCostsItsSize: a page's commands do not grow with what the list holds.
func TestLogPageCostsItsSize(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var mu sync.Mutex
	commands := 0
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if e.CommandName == "find" {
			mu.Lock()
			commands++
			mu.Unlock()
		}
	}}
	env := testkit.Backends(t)
	testkit.Database(t, env, "mongox") // dropped at the end
	client, db, err := mongox.Connect(ctx, env.MongoURI, env.Name+"_mongox", mon)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	log := mongox.NewLog(db.Collection("log"))
	count := func(f func()) int {
		mu.Lock()
		commands = 0
		mu.Unlock()
		f()
		mu.Lock()
		defer mu.Unlock()
		return commands
	}
	var small, large int
	for _, size := range []int{10, 300} {
		for n, _ := log.Len(ctx, "l"); n < int64(size); n++ {
			if _, err := mongox.Append(ctx, log, "l", item{Title: "x"}); err != nil {
				t.Fatal(err)
			}
		}
		got := count(func() {
			if _, _, err := mongox.Page[item](ctx, log, "l", 0, 5); err != nil {
				t.Fatal(err)
			}
		})
		if size == 10 {
			small = got
		} else {
			large = got
		}
	}
	if small != large || large > 5+3 {
		t.Fatalf("finds per page: %d at 10 entries, %d at 300; want equal and at most 8", small, large)
	}
}

// TestPageWhereBoundsItsReads: a filtered page keeps what the filter accepts, in list order,
// resumes where it stopped, and never reads more than its budget, so a list of entries the filter
// refuses costs a short page with a cursor rather than a walk through the whole list.
func TestPageWhereBoundsItsReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := mongox.NewLog(testkit.Database(t, testkit.Backends(t), "mongox").Collection("log"))
	for i := 1; i <= 40; i++ {
		if _, err := mongox.Append(ctx, log, "l", i); err != nil {
			t.Fatal(err)
		}
	}
	var seen []int
	even := func(_ context.Context, e mongox.Entry[int]) (bool, error) {
		seen = append(seen, e.Value)
		return e.Value%2 == 0, nil
	}
	page, next, err := mongox.PageWhere(ctx, log, "l", 0, 3, 100, even)
	if err != nil || len(page) != 3 || page[0].Value != 40 || page[2].Value != 36 || next != 36 {
		t.Fatalf("first page %+v next %d: %v", page, next, err)
	}
	page, next, err = mongox.PageWhere(ctx, log, "l", next, 2, 100, even)
	if err != nil || len(page) != 2 || page[0].Value != 34 || page[1].Value != 32 {
		t.Fatalf("second page %+v next %d: %v", page, next, err)
	}
	seen = nil
	none := func(_ context.Context, e mongox.Entry[int]) (bool, error) {
		seen = append(seen, e.Value)
		return false, nil
	}
	page, next, err = mongox.PageWhere(ctx, log, "l", 0, 5, 12, none)
	if err != nil || len(page) != 0 || next != 29 || len(seen) != 12 {
		t.Fatalf("refused page %+v next %d read %d: %v", page, next, len(seen), err)
	}
	page, next, err = mongox.PageWhere(ctx, log, "l", 5, 10, 100, even)
	if err != nil || len(page) != 2 || page[0].Value != 4 || next != 0 {
		t.Fatalf("last page %+v next %d: %v", page, next, err)
	}
}

// countingLog is a Log of a collection whose commands are counted by name.
func countingLog(t *testing.T) (mongox.Log, *mongo.Collection, func() map[string]int) {
	t.Helper()
	var mu sync.Mutex
	counts := map[string]int{}
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		mu.Lock()
		counts[e.CommandName]++
		mu.Unlock()
	}}
	env := testkit.Backends(t)
	testkit.Database(t, env, "mongox") // dropped at the end
	client, db, err := mongox.Connect(context.Background(), env.MongoURI, env.Name+"_mongox", mon)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	coll := db.Collection("log")
	take := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := counts
		counts = map[string]int{}
		return out
	}
	return mongox.NewLog(coll), coll, take
}

// TestLogWarmAppendsCostOneInsert: once a Log knows a list's end, an append is one insert (the
// head hint is moved every eighth position), a keyed append two (its marker and the entry), and
// a length one read; positions stay 1, 2, 3... with no gap.
func TestLogWarmAppendsCostOneInsert(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log, _, take := countingLog(t)
	if _, err := mongox.Append(ctx, log, "l", item{Title: "first"}); err != nil {
		t.Fatal(err)
	}
	take()
	for i := 2; i <= 33; i++ {
		if seq, err := mongox.Append(ctx, log, "l", item{Title: fmt.Sprint(i)}); err != nil || seq != int64(i) {
			t.Fatalf("append %d: seq %d, %v", i, seq, err)
		}
	}
	got := take()
	if got["insert"] != 32 || got["find"] != 0 || got["update"] > 4 {
		t.Fatalf("32 warm appends sent %v; want 32 inserts, no find, at most 4 head updates", got)
	}
	for i := range 16 {
		seq, added, err := mongox.AppendOnce(ctx, log, "l", fmt.Sprint("ev_", i), item{Title: "keyed"})
		if err != nil || !added || seq != int64(34+i) {
			t.Fatalf("append once %d: %d %v %v", i, seq, added, err)
		}
	}
	got = take()
	if got["insert"] != 32 || got["find"] != 0 || got["update"] > 2 {
		t.Fatalf("16 warm keyed appends sent %v; want 32 inserts (marker and entry), no find, at most 2 head updates", got)
	}
	if n, err := log.Len(ctx, "l"); err != nil || n != 49 {
		t.Fatalf("len %d, %v; want 49", n, err)
	}
	if got = take(); got["find"] != 1 || len(got) != 1 {
		t.Fatalf("a length known to this Log sent %v; want one find", got)
	}
	if seq, added, err := mongox.AppendOnce(ctx, log, "l", "ev_3", item{Title: "again"}); err != nil || added || seq != 37 {
		t.Fatalf("redelivery: %d %v %v", seq, added, err)
	}
}

// TestLogManyWriters: Logs of several processes appending to one list at once never share or
// skip a position, and a Log that never saw the list finds its length from the head hint in one
// batch of reads, whatever the list holds.
func TestLogManyWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	first, coll, take := countingLog(t)
	logs := []mongox.Log{first, mongox.NewLog(coll), mongox.NewLog(coll), mongox.NewLog(coll)}
	var mu sync.Mutex
	var seqs []int64
	var wg sync.WaitGroup
	for w, log := range logs {
		for g := range 3 {
			wg.Go(func() {
				for i := range 10 {
					var seq int64
					var err error
					if i%2 == 0 {
						seq, err = mongox.Append(ctx, log, "busy", item{Title: fmt.Sprint(w, g, i)})
					} else {
						seq, _, err = mongox.AppendOnce(ctx, log, "busy", fmt.Sprint("ev_", w, "_", g, "_", i), item{})
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					seqs = append(seqs, seq)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	wantEveryPosition(t, seqs)
	for _, log := range logs {
		if n, err := log.Len(ctx, "busy"); err != nil || n != int64(len(seqs)) {
			t.Fatalf("len %d, %v; want %d", n, err, len(seqs))
		}
	}
	for w := range 4 { // keys appended by one Log are found again by another
		key := fmt.Sprint("ev_", w, "_1_3")
		if _, added, err := mongox.AppendOnce(ctx, logs[(w+1)%4], "busy", key, item{}); err != nil || added {
			t.Fatalf("redelivery of %s to another Log: added %v, %v", key, added, err)
		}
	}
	take()
	fresh := mongox.NewLog(coll)
	if n, err := fresh.Len(ctx, "busy"); err != nil || n != int64(len(seqs)) {
		t.Fatalf("a new Log's len %d, %v; want %d", n, err, len(seqs))
	}
	// The head, the position after it and one batch of 8; two when racing head updates left the
	// hint a stride behind (an update on FerretDB is read-then-rewrite): never a walk through
	// the list.
	if got := take(); got["find"] > 2+2*8 {
		t.Fatalf("a new Log's length sent %v; want the head, one read and a batch or two of 8", got)
	}
}

// TestLogLoadWritesWhatAppendsWrite: lists loaded in bulk hold the documents appends write:
// they page, count and refuse a redelivered key as appended ones do, and appends go on after
// them with no gap.
func TestLogLoadWritesWhatAppendsWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testkit.Database(t, testkit.Backends(t), "mongox")
	appended, loaded := mongox.NewLog(db.Collection("appended")), mongox.NewLog(db.Collection("loaded"))
	for _, log := range []mongox.Log{appended, loaded} { // a list that exists before the load
		if _, _, err := mongox.AppendOnce(ctx, log, "l", "ev_0", item{Title: "before"}); err != nil {
			t.Fatal(err)
		}
	}
	load := loaded.Load()
	load.Fresh("ev_1", "ev_2", "ev_3")
	for i, key := range []string{"ev_1", "", "ev_2", "ev_1", "ev_0", "ev_3", "box"} {
		v := item{Title: fmt.Sprint(i)}
		var seqA int64
		var addedA bool
		var errA error
		if key == "" {
			seqA, errA = mongox.Append(ctx, appended, "l", v)
		} else {
			seqA, addedA, errA = mongox.AppendOnce(ctx, appended, "l", key, v)
		}
		seqL, addedL, errL := mongox.LoadAppend(ctx, load, "l", key, v)
		if errA != nil || errL != nil || seqA != seqL || addedA != addedL && key != "" {
			t.Fatalf("append %d (%q): appended %d %v %v, loaded %d %v %v", i, key, seqA, addedA, errA, seqL, addedL, errL)
		}
	}
	if err := load.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	pageA, _, errA := mongox.Page[item](ctx, mongox.NewLog(db.Collection("appended")), "l", 0, 20)
	pageL, _, errL := mongox.Page[item](ctx, mongox.NewLog(db.Collection("loaded")), "l", 0, 20)
	if errA != nil || errL != nil || len(pageA) != 6 || len(pageA) != len(pageL) {
		t.Fatalf("pages: appended %d %v, loaded %d %v", len(pageA), errA, len(pageL), errL)
	}
	for i := range pageA {
		a, l := pageA[i], pageL[i]
		if a.Seq != l.Seq || a.Key != l.Key || a.Value != l.Value {
			t.Fatalf("entry %d: appended %+v, loaded %+v", i, a, l)
		}
	}
	fresh := mongox.NewLog(db.Collection("loaded"))
	if seq, added, err := mongox.AppendOnce(ctx, fresh, "l", "ev_2", item{}); err != nil || added || seq != 4 {
		t.Fatalf("redelivery after the load: %d %v %v", seq, added, err)
	}
	if seq, err := mongox.Append(ctx, fresh, "l", item{Title: "after"}); err != nil || seq != 7 {
		t.Fatalf("append after the load: %d %v", seq, err)
	}
}

// TestLogAppendOnceOfAnyValue: a redelivered key is found whatever the type of the values the
// list holds (a string here), so a consumer's retry reports the first append rather than failing.
func TestLogAppendOnceOfAnyValue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	coll := testkit.Database(t, testkit.Backends(t), "mongox").Collection("log")
	// The second Log is another process: it knows nothing of the list's end.
	for n, l := range []mongox.Log{mongox.NewLog(coll), mongox.NewLog(coll)} {
		for i := range 2 {
			seq, added, err := mongox.AppendOnce(ctx, l, "claims", "evt_1", "clm_1")
			if err != nil || seq != 1 || added != (n == 0 && i == 0) {
				t.Fatalf("log %d append %d: seq %d added %v: %v", n, i, seq, added, err)
			}
		}
	}
}

// wantEveryPosition fails unless seqs, the positions concurrent appends got, are 1..len(seqs):
// none shared, none skipped.
func wantEveryPosition(t *testing.T, seqs []int64) {
	t.Helper()
	slices.Sort(seqs)
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("positions %v, want 1..%d", seqs, len(seqs))
		}
	}
}
