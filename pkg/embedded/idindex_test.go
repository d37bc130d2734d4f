package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// postgresURLEnv names a PostgreSQL database for the postgresql handler's test and benchmark, for
// example after `apt-get install postgresql`:
//
//	su postgres -c "createuser -s $USER" && createdb svc_bench
//	FERRETDB_POSTGRESQL_URL=postgres://127.0.0.1:5432/svc_bench make bench-embedded
const postgresURLEnv = "FERRETDB_POSTGRESQL_URL"

// startHandler starts FerretDB on handler ("sqlite" or "postgresql") and returns a client.
func startHandler(tb testing.TB, handler string) (*Mongo, *mongo.Client) {
	tb.Helper()
	opts := MongoOptions{Dir: tb.TempDir(), IndexInterval: time.Hour, TidyInterval: time.Hour}
	if handler == "postgresql" {
		opts.PostgreSQLURL = os.Getenv(postgresURLEnv)
		if opts.PostgreSQLURL == "" {
			if os.Getenv("SVC_REQUIRE_SYSTEM_BACKENDS") != "" {
				tb.Fatalf("%s is not set, and SVC_REQUIRE_SYSTEM_BACKENDS forbids skipping the postgresql handler", postgresURLEnv)
			}
			tb.Skipf("%s is not set: the postgresql handler is not measured (make bench-embedded requires it)", postgresURLEnv)
		}
	}
	return startMongo(tb, opts)
}

// startMongo starts FerretDB with opts and returns a client; both stop with the test.
func startMongo(tb testing.TB, opts MongoOptions) (*Mongo, *mongo.Client) {
	tb.Helper()
	m, err := StartMongo(context.Background(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(m.Stop)
	c, err := mongo.Connect(options.Client().ApplyURI(m.URI))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return m, c
}

// syncAndConnect indexes m's collections and connects to its PostgreSQL database, until the test ends.
func syncAndConnect(t *testing.T, m *Mongo) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	if err := m.SyncIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, os.Getenv(postgresURLEnv))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// uniqueDB names a database no other run uses (PostgreSQL keeps schemas between runs).
func uniqueDB(prefix string) string { return fmt.Sprintf("%s_%d", prefix, time.Now().UnixNano()) }

// ownPostgreSQL creates a PostgreSQL database of the test's own next to the one
// FERRETDB_POSTGRESQL_URL names, and returns its URL; it is dropped when the test ends. Every
// FerretDB started on the shared database (each test process's testkit starts one) indexes and
// vacuums all its schemas, so a test that counts vacuums needs a database nobody else watches.
func ownPostgreSQL(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	shared := os.Getenv(postgresURLEnv)
	if shared == "" {
		if os.Getenv("SVC_REQUIRE_SYSTEM_BACKENDS") != "" {
			t.Fatalf("%s is not set, and SVC_REQUIRE_SYSTEM_BACKENDS forbids skipping the postgresql handler", postgresURLEnv)
		}
		t.Skipf("%s is not set: the postgresql handler is not tested", postgresURLEnv)
	}
	cfg, err := pgx.ParseConfig(shared)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	name := uniqueDB("own")
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.ConnectConfig(context.Background(), cfg)
		if err != nil {
			return
		}
		defer conn.Close(context.Background())
		_, _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	})
	u, err := url.Parse(shared)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

func TestIDIndexServesPointReadsOnSQLite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	m, c := startMongo(t, MongoOptions{Dir: dir, IndexInterval: time.Hour})
	if _, err := c.Database("app").Collection("things").InsertOne(ctx, bson.M{"_id": "a"}); err != nil {
		t.Fatal(err)
	}
	if err := m.SyncIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "app.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var table string
	if err := db.QueryRow(`SELECT table_name FROM _ferretdb_collections WHERE name = 'things'`).Scan(&table); err != nil {
		t.Fatal(err)
	}
	// The statement the patched FerretDB's sqlite handler runs for FindOne({_id}), served by the
	// unique `_id` index FerretDB creates with the collection.
	var res struct {
		QueryPlanner bson.Raw `bson:"queryPlanner"`
	}
	find := bson.D{{Key: "find", Value: "things"}, {Key: "filter", Value: bson.D{{Key: "_id", Value: "a"}}}}
	if err := c.Database("app").RunCommand(ctx, bson.D{{Key: "explain", Value: find}}).Decode(&res); err != nil {
		t.Fatal(err)
	}
	if plan, want := res.QueryPlanner.String(), table+"__id_"; !strings.Contains(plan, "SEARCH") || !strings.Contains(plan, want) {
		t.Fatalf("plan of an _id lookup = %q, want a SEARCH using %s", plan, want)
	}
	var doc bson.M
	if err := c.Database("app").Collection("things").FindOne(ctx, bson.M{"_id": "a"}).Decode(&doc); err != nil {
		t.Fatalf("FindOne after indexing: %v", err)
	}
}

func TestIDIndexServesPointReadsOnPostgreSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, c := startHandler(t, "postgresql")
	name := uniqueDB("idindex")
	if _, err := c.Database(name).Collection("things").InsertOne(ctx, bson.M{"_id": "a"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Database(name).Drop(context.Background()) })
	conn := syncAndConnect(t, m)
	var table string
	meta := pgx.Identifier{name, "_ferretdb_database_metadata"}.Sanitize()
	if err := conn.QueryRow(ctx, `SELECT _jsonb->>'table' FROM `+meta+` WHERE _jsonb->>'_id' = 'things'`).Scan(&table); err != nil {
		t.Fatal(err)
	}
	// Without statistics on a one-row table the planner prefers a scan; forbid it to see
	// whether the index can serve the pushdown's expression at all.
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, fmt.Sprintf(`EXPLAIN SELECT _jsonb FROM %s WHERE _jsonb->'_id' @> '"a"'`,
		pgx.Identifier{name, table}.Sanitize()))
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if plan := strings.Join(lines, "; "); !strings.Contains(plan, idIndexName(table)) {
		t.Fatalf("plan of an _id lookup = %q, want it to use %s", plan, idIndexName(table))
	}
}

// TestTidyVacuumsTablesThatDeletesEmptied: a collection whose rows were mostly deleted is
// vacuumed by one tidy, one whose rows are mostly live is left alone; the `_id` index is
// created without a pending list (fastupdate off).
func TestTidyVacuumsTablesThatDeletesEmptied(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pgURL := ownPostgreSQL(t)
	// Its own tidy loop waits an hour: this test calls tidy.
	m, c := startMongo(t, MongoOptions{Dir: t.TempDir(), PostgreSQLURL: pgURL, IndexInterval: time.Hour, TidyInterval: time.Hour})
	name := "tidy"
	docs := make([]any, 1000)
	for i := range docs {
		docs[i] = bson.M{"_id": i, "payload": strings.Repeat("x", 500)}
	}
	for _, coll := range []string{"queue", "kept"} {
		if _, err := c.Database(name).Collection(coll).InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.SyncIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	table := func(coll string) string {
		var table string
		meta := pgx.Identifier{name, "_ferretdb_database_metadata"}.Sanitize()
		if err := conn.QueryRow(ctx, `SELECT _jsonb->>'table' FROM `+meta+` WHERE _jsonb->>'_id' = $1`, coll).Scan(&table); err != nil {
			t.Fatal(err)
		}
		return table
	}
	queue, kept := table("queue"), table("kept")
	for _, tbl := range []string{queue, kept} { // only tidy may vacuum them here, from before the deletes
		if _, err := conn.Exec(ctx, "ALTER TABLE "+pgx.Identifier{name, tbl}.Sanitize()+" SET (autovacuum_enabled = false)"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Database(name).Collection("queue").DeleteMany(ctx, bson.M{"_id": bson.M{"$gte": 100}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Database(name).Collection("kept").DeleteMany(ctx, bson.M{"_id": bson.M{"$gte": 800}}); err != nil {
		t.Fatal(err)
	}
	stats := func(table string) (dead, vacuums int64) {
		if err := conn.QueryRow(ctx, `SELECT n_dead_tup, vacuum_count FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = $2`,
			name, table).Scan(&dead, &vacuums); err != nil {
			t.Fatal(err)
		}
		return dead, vacuums
	}
	// An idle backend reports its dead rows to the statistics within 10 s (PostgreSQL 15).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		qd, _ := stats(queue)
		kd, _ := stats(kept)
		if qd >= 900 && kd >= 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the statistics never showed the deletes: %d and %d dead rows", qd, kd)
		}
	}
	if err := m.indexer.tidy(ctx); err != nil {
		t.Fatal(err)
	}
	if dead, vacuums := stats(queue); vacuums == 0 || dead != 0 {
		t.Errorf("mostly deleted table: %d vacuums, %d dead rows after tidy; want it vacuumed", vacuums, dead)
	}
	if dead, vacuums := stats(kept); vacuums != 0 || dead < 200 {
		t.Errorf("mostly live table: %d vacuums, %d dead rows after tidy; want it left alone", vacuums, dead)
	}
	var options []string
	if err := conn.QueryRow(ctx, `SELECT coalesce(reloptions, '{}') FROM pg_class WHERE relname = $1`, idIndexName(queue)).Scan(&options); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(options, "fastupdate=off") {
		t.Errorf("_id index options %v, want fastupdate=off", options)
	}
}

// TestSyncSkipsADroppedDatabase: a database dropped between the listing of schemas and the read
// of its metadata (tests and services drop theirs at any time) is no error.
func TestSyncSkipsADroppedDatabase(t *testing.T) {
	t.Parallel()
	m, _ := startHandler(t, "postgresql")
	if err := m.indexer.(*postgresIndexer).syncSchema(context.Background(), uniqueDB("dropped")); err != nil {
		t.Fatalf("sync of a schema that is gone: %v", err)
	}
}

// BenchmarkFindOneByID prints the cost of FindOne({_id}) at 1,000 and 100,000 documents on both
// FerretDB handlers; with the `_id` pushdown index the two sizes cost about the same.
func BenchmarkFindOneByID(b *testing.B) {
	for _, handler := range []string{"sqlite", "postgresql"} {
		for _, size := range []int{1_000, 100_000} {
			b.Run(fmt.Sprintf("%s/docs=%d", handler, size), func(b *testing.B) {
				m, c := startHandler(b, handler)
				ctx := context.Background()
				coll := c.Database(uniqueDB("bench")).Collection("docs")
				b.Cleanup(func() { _ = coll.Database().Drop(context.Background()) })
				fill(b, coll, size)
				if err := m.SyncIndexes(ctx); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					var doc bson.M
					id := fmt.Sprintf("doc-%07d", (i*7919)%size)
					if err := coll.FindOne(ctx, bson.M{"_id": id}).Decode(&doc); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func fill(b *testing.B, coll *mongo.Collection, size int) {
	b.Helper()
	const batch = 1_000
	for start := 0; start < size; start += batch {
		docs := make([]any, 0, batch)
		for i := start; i < min(size, start+batch); i++ {
			docs = append(docs, bson.M{"_id": fmt.Sprintf("doc-%07d", i), "n": i, "body": "a message body of ordinary length"})
		}
		if _, err := coll.InsertMany(context.Background(), docs); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRacingIndexersBothSucceed: two FerretDBs syncing the same new collections at once (each
// lists the index as missing, both create it) both report success.
func TestRacingIndexersBothSucceed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pgURL := ownPostgreSQL(t)
	a, c := startMongo(t, MongoOptions{Dir: t.TempDir(), PostgreSQLURL: pgURL, IndexInterval: time.Hour, TidyInterval: time.Hour})
	b, _ := startMongo(t, MongoOptions{Dir: t.TempDir(), PostgreSQLURL: pgURL, IndexInterval: time.Hour, TidyInterval: time.Hour})
	for round := range 5 {
		db := c.Database(fmt.Sprintf("race%d", round))
		for i := range 20 {
			if err := db.CreateCollection(ctx, fmt.Sprintf("c%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		errs := make(chan error, 2)
		for _, m := range []*Mongo{a, b} {
			go func() { errs <- m.SyncIndexes(ctx) }()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
