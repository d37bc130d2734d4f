package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "modernc.org/sqlite" // the SQLite driver FerretDB itself uses
)

// FerretDB v1.24 pushes `_id` equality down to SQL, but on PostgreSQL no index of its own serves
// that SQL, so a point read or update by `_id` scans the whole table: the postgresql handler
// filters on `_jsonb->'_id' @> $2`, a containment its btree cannot answer (FerretDB issue 4646);
// a GIN index on the same expression can. On SQLite the patched FerretDB in third_party/ferretdb
// serves `_id` equality, `$in` and ranges from its own unique `_id` index, which it creates on
// the `_id`'s text and type (metadata.IDIndexSQL there), so SQLite needs no index of ours.
//
// idIndexer adds, to every collection table FerretDB keeps on PostgreSQL, the indexes the patched
// FerretDB's SQL needs and FerretDB does not create: one on exactly the expression of the
// equality pushdown, and one on the `_id` string that it reads an `_id` range by: with it, a page
// of a list (an `_id` range, an `_id` sort and a limit; see mongox.Range) is an index range scan
// without a sort step. FerretDB does not know about these indexes (they are not in its metadata),
// so they never show in listIndexes and disappear with their table. Collections are found in
// FerretDB's own metadata tables: `<schema>._ferretdb_database_metadata` rows
// `{_id: collection, table: table}` on PostgreSQL, and `_ferretdb_collections` in each
// `<database>.sqlite` file, whose indexes of earlier releases the SQLite indexer drops.
type idIndexer interface {
	// sync indexes every collection table that has no `_id` pushdown index yet.
	sync(ctx context.Context) error
	// tidy compacts the tables that deletes have left mostly dead (see postgresIndexer.tidy).
	tidy(ctx context.Context) error
	close()
}

// idIndexName names the index of table; hashed, because PostgreSQL cuts identifiers at 63 bytes.
func idIndexName(table string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(table))
	return fmt.Sprintf("svc_id_%016x", h.Sum64())
}

// idRangeIndexName names the index that serves `_id` ranges on table.
func idRangeIndexName(table string) string {
	return strings.Replace(idIndexName(table), "svc_id_", "svc_idr_", 1)
}

// obsoleteSQLiteIndex tells the indexes that earlier releases created on every SQLite table and
// sync drops: one on `_ferretdb_sjson->'$._id'` (named by idIndexName), which served FerretDB's
// `_id` equality, and one on `_ferretdb_sjson->>'$._id'` (idRangeIndexName), which served `_id`
// ranges, until the patched FerretDB's own `_id` index served both. Nothing reads them any more,
// and every insert paid for each: another extraction of `_id` from the document's JSON, another
// b-tree entry and more pages in the commit.
func obsoleteSQLiteIndex(name string) bool {
	return strings.HasPrefix(name, "svc_id_") || strings.HasPrefix(name, "svc_idr_")
}

// sqliteIndexer drops the indexes of earlier releases (obsoleteSQLiteIndex) from the SQLite files
// of one FerretDB directory.
type sqliteIndexer struct {
	dir string
	log *slog.Logger
	mu  sync.Mutex
	dbs map[string]*sql.DB // by file
}

func newSQLiteIndexer(dir string, log *slog.Logger) *sqliteIndexer {
	return &sqliteIndexer{dir: dir, log: log, dbs: map[string]*sql.DB{}}
}

func (s *sqliteIndexer) sync(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	files, err := filepath.Glob(filepath.Join(s.dir, "*.sqlite"))
	if err != nil {
		return fmt.Errorf("list sqlite files: %w", err)
	}
	s.forgetDropped(files)
	var errs []error
	for _, file := range files {
		db, err := s.open(file)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := s.syncFile(ctx, db); err != nil {
			errs = append(errs, fmt.Errorf("index %s: %w", filepath.Base(file), err))
		}
	}
	return errors.Join(errs...)
}

// forgetDropped closes the handles of database files that are gone (dropped databases), so
// that they do not keep deleted files open.
func (s *sqliteIndexer) forgetDropped(files []string) {
	for file, db := range s.dbs {
		if !slices.Contains(files, file) {
			_ = db.Close()
			delete(s.dbs, file)
		}
	}
}

func (s *sqliteIndexer) open(file string) (*sql.DB, error) {
	if db, ok := s.dbs[file]; ok {
		return db, nil
	}
	// The same pragmas as FerretDB's: wait for its writers rather than fail, and keep WAL.
	db, err := sql.Open("sqlite", "file:"+file+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(wal)")
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", file, err)
	}
	db.SetMaxOpenConns(1)
	s.dbs[file] = db
	return db, nil
}

func (s *sqliteIndexer) syncFile(ctx context.Context, db *sql.DB) error {
	have, err := queryStrings(ctx, db, `SELECT name FROM sqlite_master WHERE type = 'index'`)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range have {
		if obsoleteSQLiteIndex(name) {
			if _, err := db.ExecContext(ctx, fmt.Sprintf(`DROP INDEX IF EXISTS %q`, name)); err != nil {
				errs = append(errs, fmt.Errorf("drop index %s: %w", name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// tidy has nothing to do on SQLite: a deleted row leaves the table's b-tree at once, so a scan
// never reads it.
func (s *sqliteIndexer) tidy(context.Context) error { return nil }

func (s *sqliteIndexer) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, db := range s.dbs {
		_ = db.Close()
	}
	s.dbs = map[string]*sql.DB{}
}

// queryStrings runs q and returns its single text column.
func queryStrings(ctx context.Context, db *sql.DB, q string) ([]string, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v sql.NullString
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v.String)
	}
	return out, rows.Err()
}

// missing returns the tables whose index, named by name, is not among have.
func missing(tables, have []string, name func(table string) string) []string {
	set := make(map[string]bool, len(have))
	for _, h := range have {
		set[h] = true
	}
	var out []string
	for _, t := range tables {
		if t != "" && !set[name(t)] {
			out = append(out, t)
		}
	}
	return out
}

// postgresIndexes are the indexes every collection table gets on PostgreSQL: a GIN index for
// FerretDB's `_id` equality pushdown (a containment, `_jsonb->'_id' @> $1`), and a btree on the
// `_id` text in the "C" collation for the `_id` range pushdown of the patched FerretDB
// (IDTextColumn in third_party/ferretdb/internal/backends/postgresql), which also gives that range
// its order. The btree holds string ids only, under the very condition the pushdown checks: the
// planner then counts on every entry of the range matching rather than guessing that few do and
// choosing to sort a bitmap scan's rows. Without fastupdate, an insert adds its key to the GIN
// index itself rather than to a pending list that every lookup then reads until a vacuum empties it.
var postgresIndexes = []struct {
	name func(table string) string
	def  string
}{
	{idIndexName, `USING gin ((_jsonb->'_id')) WITH (fastupdate = off)`},
	{idRangeIndexName, `(((_jsonb->>'_id') COLLATE "C")) WHERE _jsonb->'$s'->'p'->'_id'->'t' = '"string"'`},
}

// postgresIndexer indexes every FerretDB schema of one PostgreSQL database.
type postgresIndexer struct {
	pool *pgxpool.Pool
	// tuned is set once the indexes of earlier releases have fastupdate off.
	tuned atomic.Bool
}

func newPostgresIndexer(ctx context.Context, url string) (*postgresIndexer, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgresql url: %w", err)
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect postgresql: %w", err)
	}
	return &postgresIndexer{pool: pool}, nil
}

func (p *postgresIndexer) sync(ctx context.Context) error {
	schemas, err := p.strings(ctx,
		`SELECT table_schema FROM information_schema.tables WHERE table_name = '_ferretdb_database_metadata'`)
	if err != nil {
		return fmt.Errorf("list ferretdb schemas: %w", err)
	}
	var errs []error
	for _, schema := range schemas {
		if err := p.syncSchema(ctx, schema); err != nil {
			errs = append(errs, fmt.Errorf("index schema %s: %w", schema, err))
		}
	}
	if !p.tuned.Load() {
		err := p.fastUpdateOff(ctx)
		p.tuned.Store(err == nil)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// fastUpdateOff turns fastupdate off on the `_id` indexes that earlier releases created with it.
func (p *postgresIndexer) fastUpdateOff(ctx context.Context) error {
	return p.eachRelation(ctx, "ALTER INDEX %s SET (fastupdate = off)",
		`SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind = 'i' AND c.relname LIKE 'svc\_id\_%' AND NOT coalesce(c.reloptions @> '{fastupdate=off}', false)`)
}

// eachRelation runs stmt, whose %s is a relation's name, on every (schema, name) that query
// lists; one dropped meanwhile is skipped.
func (p *postgresIndexer) eachRelation(ctx context.Context, stmt, query string, args ...any) error {
	rows, err := p.pool.Query(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("list relations for %q: %w", stmt, err)
	}
	rels, err := pgx.CollectRows(rows, collectIdentifier)
	if err != nil {
		return fmt.Errorf("list relations for %q: %w", stmt, err)
	}
	var errs []error
	for _, rel := range rels {
		q := fmt.Sprintf(stmt, rel.Sanitize())
		if _, err := p.pool.Exec(ctx, q); err != nil && !dropped(err) {
			errs = append(errs, fmt.Errorf("%s: %w", q, err))
		}
	}
	return errors.Join(errs...)
}

// dropped reports whether err says that a table or schema does not exist (any more).
func dropped(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == pgerrcode.UndefinedTable || pgErr.Code == pgerrcode.InvalidSchemaName)
}

// createdMeanwhile reports whether err says that another process created the same index while
// this one did: two FerretDBs on one database (replicas, or a test next to a running stack) race
// in CREATE INDEX IF NOT EXISTS, and the loser's insert into the catalogue is a unique violation.
func createdMeanwhile(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == pgerrcode.UniqueViolation || pgErr.Code == pgerrcode.DuplicateTable)
}

// collectIdentifier reads a row of (schema, name).
func collectIdentifier(r pgx.CollectableRow) (pgx.Identifier, error) {
	var schema, name string
	err := r.Scan(&schema, &name)
	return pgx.Identifier{schema, name}, err
}

func (p *postgresIndexer) syncSchema(ctx context.Context, schema string) error {
	meta := pgx.Identifier{schema, "_ferretdb_database_metadata"}.Sanitize()
	tables, err := p.strings(ctx, `SELECT _jsonb->>'table' FROM `+meta)
	if dropped(err) {
		return nil // the database was dropped since the schemas were listed
	}
	if err != nil {
		return err
	}
	have, err := p.strings(ctx, `SELECT indexname FROM pg_indexes WHERE schemaname = $1`, schema)
	if err != nil {
		return err
	}
	var errs []error
	for _, ix := range postgresIndexes {
		for _, table := range missing(tables, have, ix.name) {
			q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s `+ix.def,
				pgx.Identifier{ix.name(table)}.Sanitize(), pgx.Identifier{schema, table}.Sanitize())
			if _, err := p.pool.Exec(ctx, q); err != nil && !dropped(err) && !createdMeanwhile(err) {
				errs = append(errs, fmt.Errorf("index %s: %w", table, err))
			}
		}
	}
	return errors.Join(errs...)
}

// deadRows is the fewest dead rows for which tidy vacuums a table: below it a scan reads little.
const deadRows = 200

// tidy vacuums every FerretDB table whose dead rows outnumber its live ones, without giving back
// its empty pages (that would lock out its writers). FerretDB answers any filter but `_id`
// equality by reading the whole table, dead rows included, and a queue-like collection (the
// outbox: an insert, then a delete, for every event) is read that way on every acknowledgement.
// Autovacuum visits a database at most once a minute (autovacuum_naptime), in which time such a
// table piles up tens of thousands of dead rows and every scan of it reads them. Vacuumed as soon
// as its dead rows outnumber its live ones, it stays a few pages long. Its cost follows the rows
// deleted since the last look, and one look at the statistics per call.
func (p *postgresIndexer) tidy(ctx context.Context) error {
	return p.eachRelation(ctx, "VACUUM (TRUNCATE false) %s", `SELECT s.schemaname, s.relname FROM pg_stat_user_tables s
		WHERE s.n_dead_tup >= $1 AND s.n_dead_tup > s.n_live_tup
			AND to_regclass(quote_ident(s.schemaname) || '._ferretdb_database_metadata') IS NOT NULL`, deadRows)
}

func (p *postgresIndexer) strings(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := p.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var v *string
		err := r.Scan(&v)
		if v == nil {
			return "", err
		}
		return *v, err
	})
}

func (p *postgresIndexer) close() { p.pool.Close() }
