package embedded

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// rangeIDs are the _ids of TestIDRangeFindsWhatMongoDBFinds: strings of the key alphabet, strings
// with characters that JSON escapes or that sort below `"`, ObjectIDs (stored as hex text, like a
// string) and numbers.
var rangeIDs = []any{
	"s|0001|a", "s|0001|b", "s|0002|a", "s|0002|a-", "s|0003|~", "t|0001|a", "S|0001|a",
	"", "a", "a\x01", `a"b`, "a b", "a<b", "a\\b", "a\u00e9", "ab", "\u00e9", "~", "\U0001F600",
	bson.ObjectID{0x61}, bson.ObjectID{0x73, 0x7c}, bson.ObjectID{0xff},
	int32(3), int64(-7), 2.5,
}

// rangeBounds are the bound values tried: ids, values between ids, and the extremes.
var rangeBounds = []string{"", "a", `a"`, "a<b", "s|", "s|0002|a", "s}", "\u00e9"}

// TestIDRangeFindsWhatMongoDBFinds: a find with every combination of string _id bounds ($gt,
// $gte, $lt, $lte; and a few of $in), _id sort, skip and limit, with or without a filter on another field, returns
// what MongoDB's semantics say (evaluated here by brute force): only string ids, compared by
// bytes, in _id order. On SQLite the patched FerretDB answers it in SQL from the range index.
func TestIDRangeFindsWhatMongoDBFinds(t *testing.T) {
	t.Parallel()
	for _, handler := range []string{"sqlite", "postgresql"} {
		t.Run(handler, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			m, c := startHandler(t, handler)
			coll := c.Database(uniqueDB("idrange")).Collection("mixed")
			t.Cleanup(func() { _ = coll.Database().Drop(context.Background()) })
			docs := make([]any, len(rangeIDs))
			for i, id := range rangeIDs {
				docs[i] = bson.D{{Key: "_id", Value: id}, {Key: "even", Value: i%2 == 0}}
			}
			if _, err := coll.InsertMany(ctx, docs); err != nil {
				t.Fatal(err)
			}
			if err := m.SyncIndexes(ctx); err != nil {
				t.Fatal(err)
			}
			type bound struct {
				op, value string
			}
			var los, his []*bound
			los, his = append(los, nil), append(his, nil)
			for _, v := range rangeBounds {
				los = append(los, &bound{"$gt", v}, &bound{"$gte", v})
				his = append(his, &bound{"$lt", v}, &bound{"$lte", v})
			}
			var conds []bson.D
			for _, lo := range los {
				for _, hi := range his {
					var cond bson.D
					for _, b := range []*bound{lo, hi} {
						if b != nil {
							cond = append(cond, bson.E{Key: b.op, Value: b.value})
						}
					}
					conds = append(conds, cond)
				}
			}
			// $in of strings, alone and with a bound; "61000000…" is an ObjectID's hex, not a string id.
			for _, in := range []bson.A{{"a"}, {"s|0001|b", `a"b`, "a\x01", "nope", "610000000000000000000000"}} {
				conds = append(conds, bson.D{{Key: "$in", Value: in}}, bson.D{{Key: "$in", Value: in}, {Key: "$gte", Value: "a<b"}})
			}
			checked := 0
			for _, cond := range conds {
				for _, extra := range []bool{false, true} {
					filter := bson.D{}
					if cond != nil {
						filter = append(filter, bson.E{Key: "_id", Value: cond})
					}
					if extra {
						filter = append(filter, bson.E{Key: "even", Value: true})
					}
					var want []any
					for i, id := range rangeIDs {
						if matches(id, cond) && (!extra || i%2 == 0) {
							want = append(want, id)
						}
					}
					for _, dir := range []int{0, 1, -1} {
						for _, skip := range []int64{0, 1} {
							for _, limit := range []int64{0, 1, 3} {
								opts := options.Find().SetSkip(skip).SetLimit(limit)
								if dir != 0 {
									opts.SetSort(bson.D{{Key: "_id", Value: dir}})
								}
								got := findIDs(t, coll, filter, opts)
								where := fmt.Sprintf("filter %v sort %d skip %d limit %d", filter, dir, skip, limit)
								checkPage(t, where, got, want, dir, skip, limit)
								checked++
							}
						}
					}
				}
				if cond == nil {
					continue
				}
				n, err := coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: cond}})
				if err != nil {
					t.Fatal(err)
				}
				want := 0
				for _, id := range rangeIDs {
					if matches(id, cond) {
						want++
					}
				}
				if n != int64(want) {
					t.Errorf("count of %v = %d, want %d", cond, n, want)
				}
			}
			t.Logf("%d finds checked", checked)
		})
	}
}

// matches is MongoDB's evaluation of an _id condition of string bounds and $in of strings: a
// comparison matches values of its operand's type only, and strings compare by bytes.
func matches(id any, cond bson.D) bool {
	s, isString := id.(string)
	for _, e := range cond {
		if !isString {
			return false
		}
		if e.Key == "$in" {
			if !slices.Contains(e.Value.(bson.A), any(s)) {
				return false
			}
			continue
		}
		c := strings.Compare(s, e.Value.(string))
		ok := map[string]bool{"$gt": c > 0, "$gte": c >= 0, "$lt": c < 0, "$lte": c <= 0}[e.Key]
		if !ok {
			return false
		}
	}
	return true
}

// compareIDs orders _ids as MongoDB does for these types: numbers, then strings, then ObjectIDs.
func compareIDs(a, b any) int {
	rank := func(v any) int {
		switch v.(type) {
		case int32, int64, float64:
			return 0
		case string:
			return 1
		default:
			return 2
		}
	}
	num := func(v any) float64 {
		switch n := v.(type) {
		case int32:
			return float64(n)
		case int64:
			return float64(n)
		default:
			return v.(float64)
		}
	}
	if c := cmp.Compare(rank(a), rank(b)); c != 0 {
		return c
	}
	switch a := a.(type) {
	case string:
		return strings.Compare(a, b.(string))
	case bson.ObjectID:
		bo := b.(bson.ObjectID)
		return bytes.Compare(a[:], bo[:])
	default:
		return cmp.Compare(num(a), num(b))
	}
}

// checkPage compares got with the page of want (all matches) that dir, skip and limit select;
// without a sort any page of the right size and of matching documents is right.
func checkPage(t *testing.T, where string, got, want []any, dir int, skip, limit int64) {
	t.Helper()
	size := max(0, int64(len(want))-skip)
	if limit > 0 {
		size = min(size, limit)
	}
	if dir == 0 {
		if int64(len(got)) != size {
			t.Errorf("%s: got %d documents %q, want %d of %q", where, len(got), got, size, want)
			return
		}
		seen := map[string]bool{}
		for _, id := range got {
			key := fmt.Sprintf("%T %v", id, id)
			if seen[key] || !slices.ContainsFunc(want, func(w any) bool { return compareIDs(w, id) == 0 && fmt.Sprintf("%T", w) == fmt.Sprintf("%T", id) }) {
				t.Errorf("%s: got %q, want a page of %q", where, got, want)
				return
			}
			seen[key] = true
		}
		return
	}
	sorted := slices.Clone(want)
	slices.SortFunc(sorted, func(a, b any) int { return dir * compareIDs(a, b) })
	page := sorted[min(int64(len(sorted)), skip):]
	page = page[:size]
	if !slices.EqualFunc(got, page, func(a, b any) bool { return compareIDs(a, b) == 0 }) {
		t.Errorf("%s: got %q, want %q", where, got, page)
	}
}

// findIDs returns the _ids that find returns, in order.
func findIDs(t *testing.T, coll *mongo.Collection, filter bson.D, opts *options.FindOptionsBuilder) []any {
	t.Helper()
	cur, err := coll.Find(context.Background(), filter, opts)
	if err != nil {
		t.Fatal(err)
	}
	var docs []struct {
		ID any `bson:"_id"`
	}
	if err := cur.All(context.Background(), &docs); err != nil {
		t.Fatal(err)
	}
	ids := make([]any, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	return ids
}

// TestIDRangePageUsesTheIndex: the SQL that the patched FerretDB runs for a page of a list
// (mongox.Range: an _id range, an _id sort and a limit), ascending, descending and after a
// cursor, and for a $in of ids, searches the range index and has no sort step, on SQLite and on
// PostgreSQL; and pages read with it cover the list.
func TestIDRangePageUsesTheIndex(t *testing.T) {
	t.Parallel()
	for _, handler := range []string{"sqlite", "postgresql"} {
		t.Run(handler, func(t *testing.T) {
			t.Parallel()
			testIDRangePageUsesTheIndex(t, handler)
		})
	}
}

func testIDRangePageUsesTheIndex(t *testing.T, handler string) {
	ctx := context.Background()
	m, c := startHandler(t, handler)
	db := c.Database(uniqueDB("pages"))
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	coll := db.Collection("pages")
	const size = 2000
	docs := make([]any, 0, size)
	for i := range size {
		docs = append(docs, bson.M{"_id": mongox.Key("list", mongox.Seq(int64(i))), "n": i})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := m.SyncIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	// A query makes FerretDB's connections see the new index (EXPLAIN alone does not reload the schema).
	if _, err := mongox.Find[bson.M](ctx, coll, mongox.Range{Scope: mongox.Scope("list"), Limit: 1}); err != nil {
		t.Fatal(err)
	}
	in := bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{
		mongox.Key("list", mongox.Seq(7)), mongox.Key("list", mongox.Seq(1500)), mongox.Key("list", mongox.Seq(3)),
	}}}}}
	for name, r := range map[string]struct {
		filter bson.D
		dir    int
	}{
		"ascending":  {mongox.Range{Scope: mongox.Scope("list")}.Filter(), 1},
		"descending": {mongox.Range{Scope: mongox.Scope("list")}.Filter(), -1},
		"cursor":     {mongox.Range{Scope: mongox.Scope("list"), After: mongox.Key("list", mongox.Seq(120))}.Filter(), 1},
		"$in":        {in, -1},
	} {
		find := bson.D{{Key: "find", Value: coll.Name()}, {Key: "filter", Value: r.filter},
			{Key: "sort", Value: bson.D{{Key: "_id", Value: r.dir}}}, {Key: "limit", Value: 50}}
		var res struct {
			QueryPlanner   bson.Raw `bson:"queryPlanner"`
			FilterPushdown bool     `bson:"filterPushdown"`
			SortPushdown   bool     `bson:"sortPushdown"`
			LimitPushdown  bool     `bson:"limitPushdown"`
		}
		if err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: find}}).Decode(&res); err != nil {
			t.Fatal(err)
		}
		plan := res.QueryPlanner.String()
		// On SQLite FerretDB's own unique _id index (<table>__id_) serves ranges; on PostgreSQL ours.
		uses, sorts := strings.Contains(plan, "__id_ ("), strings.Contains(plan, "TEMP B-TREE")
		if handler == "postgresql" {
			uses, sorts = strings.Contains(plan, `"Index Name": "svc_idr_`), strings.Contains(plan, `"Node Type": "Sort"`)
		}
		if !uses || sorts {
			t.Errorf("%s: plan %s, want a search of the _id index (SQLite) or the range index (svc_idr_…, PostgreSQL) without a sort step", name, plan)
		}
		if !res.FilterPushdown || !res.SortPushdown || !res.LimitPushdown {
			t.Errorf("%s: pushdown of filter %v, sort %v, limit %v; want all", name, res.FilterPushdown, res.SortPushdown, res.LimitPushdown)
		}
	}
	// Pages after a cursor, both ways, cover the list once.
	for _, desc := range []bool{false, true} {
		var seen []int
		r := mongox.Range{Scope: mongox.Scope("list"), Desc: desc, Limit: 50}
		for {
			page, err := mongox.Find[struct {
				ID string `bson:"_id"`
				N  int    `bson:"n"`
			}](ctx, coll, r)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			for _, d := range page {
				seen = append(seen, d.N)
			}
			if desc {
				r.Before = page[len(page)-1].ID
			} else {
				r.After = page[len(page)-1].ID
			}
		}
		if len(seen) != size || !slices.IsSortedFunc(seen, func(a, b int) int {
			if desc {
				return cmp.Compare(b, a)
			}
			return cmp.Compare(a, b)
		}) {
			t.Errorf("desc %v: pages gave %d documents in order %v", desc, len(seen), seen[:min(len(seen), 10)])
		}
	}
}

// TestIndexesOfEarlierReleasesAreDropped: a store indexed by earlier releases (an index on
// `_ferretdb_sjson->'$._id'` and one on `_ferretdb_sjson->>'$._id'`) loses them at the next sync,
// and its documents are still found, updated, deleted and read in ranges by `_id` from FerretDB's
// own `_id` index.
func TestIndexesOfEarlierReleasesAreDropped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	m, c := startMongo(t, MongoOptions{Dir: dir, IndexInterval: time.Hour})
	coll := c.Database("old").Collection("things")
	if _, err := coll.InsertMany(ctx, []any{bson.M{"_id": "a", "v": 1}, bson.M{"_id": "b", "v": 2}, bson.M{"_id": "c", "v": 3}}); err != nil {
		t.Fatal(err)
	}
	if err := m.SyncIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	db := openSQLite(t, dir, "old")
	table := tableOf(t, db, "things")
	// What earlier releases created on every table.
	olds := map[string]string{idIndexName(table): `_ferretdb_sjson->'$._id'`, idRangeIndexName(table): `_ferretdb_sjson->>'$._id'`}
	for name, expr := range olds {
		if _, err := db.ExecContext(ctx, fmt.Sprintf(`CREATE INDEX %q ON %q (%s)`, name, table, expr)); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.SyncIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	for name := range olds {
		if n := countIndex(t, db, name); n != 0 {
			t.Errorf("index %s of earlier releases: count %d after sync, want it dropped", name, n)
		}
	}
	if ids := findIDs(t, coll, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: "b"}}}},
		options.Find().SetSort(bson.D{{Key: "_id", Value: -1}}).SetLimit(5)); !slices.Equal(ids, []any{"c", "b"}) {
		t.Errorf("range read after the sync: %v, want [c b]", ids)
	}
	var doc bson.M
	if err := coll.FindOne(ctx, bson.M{"_id": "b"}).Decode(&doc); err != nil || doc["v"] != int32(2) {
		t.Fatalf("FindOne(b) = %v, %v; want v 2", doc, err)
	}
	if res, err := coll.UpdateOne(ctx, bson.M{"_id": "c"}, bson.M{"$set": bson.M{"v": 30}}); err != nil || res.ModifiedCount != 1 {
		t.Fatalf("UpdateOne(c) = %+v, %v; want one modified", res, err)
	}
	if res, err := coll.DeleteOne(ctx, bson.M{"_id": "a"}); err != nil || res.DeletedCount != 1 {
		t.Fatalf("DeleteOne(a) = %+v, %v; want one deleted", res, err)
	}
	cur, err := coll.Find(ctx, bson.M{}, options.Find().SetSort(bson.M{"_id": 1}))
	if err != nil {
		t.Fatal(err)
	}
	var all []struct {
		ID string `bson:"_id"`
		V  int    `bson:"v"`
	}
	if err := cur.All(ctx, &all); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(all); got != "[{b 2} {c 30}]" {
		t.Fatalf("documents after update and delete: %s, want [{b 2} {c 30}]", got)
	}
}

// countIndex counts the indexes of db named name (0 or 1).
func countIndex(t *testing.T, db *sql.DB, name string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// BenchmarkIDRangePage prints the cost of one page of 50 of a list (mongox.Find of a Range) at
// 1,000 and 100,000 documents: ascending, descending and after a cursor in the middle, on SQLite
// and on PostgreSQL when FERRETDB_POSTGRESQL_URL is set. On SQLite the patched FerretDB reads the
// page from the range index, so both sizes cost about the same.
func BenchmarkIDRangePage(b *testing.B) {
	for _, handler := range []string{"sqlite", "postgresql"} {
		for _, size := range []int{1_000, 100_000} {
			b.Run(fmt.Sprintf("%s/docs=%d", handler, size), func(b *testing.B) {
				if handler == "postgresql" && os.Getenv(postgresURLEnv) == "" {
					b.Skipf("%s is not set: the postgresql handler is not measured", postgresURLEnv)
				}
				m, c := startHandler(b, handler)
				ctx := context.Background()
				coll := c.Database(uniqueDB("bench")).Collection("list")
				b.Cleanup(func() { _ = coll.Database().Drop(context.Background()) })
				fillList(b, coll, size)
				if err := m.SyncIndexes(ctx); err != nil {
					b.Fatal(err)
				}
				scope := mongox.Scope("list")
				for _, page := range []struct {
					name string
					r    mongox.Range
				}{
					{"ascending", mongox.Range{Scope: scope, Limit: 50}},
					{"descending", mongox.Range{Scope: scope, Desc: true, Limit: 50}},
					{"cursor", mongox.Range{Scope: scope, After: mongox.Key("list", mongox.Seq(int64(size/2))), Limit: 50}},
				} {
					b.Run(page.name, func(b *testing.B) {
						for b.Loop() {
							docs, err := mongox.Find[bson.Raw](ctx, coll, page.r)
							if err != nil || len(docs) != 50 {
								b.Fatalf("page: %d documents, %v", len(docs), err)
							}
						}
					})
				}
			})
		}
	}
}

// fillList inserts size documents keyed as a list's (list|<seq>).
func fillList(b *testing.B, coll *mongo.Collection, size int) {
	b.Helper()
	const batch = 1_000
	for start := 0; start < size; start += batch {
		docs := make([]any, 0, batch)
		for i := start; i < min(size, start+batch); i++ {
			docs = append(docs, bson.M{"_id": mongox.Key("list", mongox.Seq(int64(i))), "n": i, "body": "a message body of ordinary length"})
		}
		if _, err := coll.InsertMany(context.Background(), docs); err != nil {
			b.Fatal(err)
		}
	}
}

// openSQLite opens FerretDB's file of database name in dir, until the test ends.
func openSQLite(t *testing.T, dir, name string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, name+".sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// tableOf returns the table of collection coll in db.
func tableOf(t *testing.T, db *sql.DB, coll string) string {
	t.Helper()
	var table string
	if err := db.QueryRow(`SELECT table_name FROM _ferretdb_collections WHERE name = ?`, coll).Scan(&table); err != nil {
		t.Fatal(err)
	}
	return table
}
