// Copyright 2021 FerretDB Inc.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package metadata

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/FerretDB/FerretDB/internal/util/state"
	"github.com/FerretDB/FerretDB/internal/util/testutil"
)

// TestIDOfEarlierReleasesIsCarriedOver checks that opening a store whose tables have no _id
// columns, with the _id index FerretDB 1.24 made (on IDColumn) or the one of the release before
// the columns (on IDText and IDType), carries every row over to IDIndexSQL's layout; that rows a
// release rolled back to inserted without the columns are filled; and that a table whose rows
// the new unique index cannot hold keeps its old index, with its columns filled and indexed.
func TestIDOfEarlierReleasesIsCarriedOver(t *testing.T) {
	t.Parallel()

	ctx := testutil.Ctx(t)

	sp, err := state.NewProvider("")
	require.NoError(t, err)

	uri := testutil.TestSQLiteURI(t, "")
	r, err := NewRegistry(uri, 100, testutil.Logger(t), sp)
	require.NoError(t, err)

	dbName := testutil.DatabaseName(t)
	db, err := r.DatabaseGetOrCreate(ctx, dbName)
	require.NoError(t, err)

	kept := []string{
		`{"$s":{"p":{"_id":{"t":"string"}},"$k":["_id"]},"_id":"a"}`,
		`{"$s":{"p":{"_id":{"t":"string"}},"$k":["_id"]},"_id":"1"}`,
		`{"$s":{"p":{"_id":{"t":"int"}},"$k":["_id"]},"_id":1}`,
		`{"$s":{"p":{"_id":{"t":"bool"}},"$k":["_id"]},"_id":true}`,
		`{"$s":{"p":{"_id":{"t":"null"}},"$k":["_id"]},"_id":null}`,
	}

	oldTable := `CREATE TABLE %q (_ferretdb_sjson TEXT NOT NULL CHECK(_ferretdb_sjson != '')) STRICT`
	index124 := `CREATE UNIQUE INDEX %q ON %q (_ferretdb_sjson->"_id")`
	indexText := `CREATE UNIQUE INDEX %q ON %q (_ferretdb_sjson->>'$._id', json_type(_ferretdb_sjson, '$._id'))`

	cases := map[string]struct {
		table, index string // the earlier release's table and index; "" for today's
		rows         []string
		wantIndex    string // the _id index after, "" for IDIndexSQL
	}{
		"v124":       {table: oldTable, index: index124, rows: kept},
		"text":       {table: oldTable, index: indexText, rows: kept},
		"rolledBack": {rows: kept},
		// a release rolled back to rebuilt the index on its expressions
		"rolledBackIndex": {index: indexText, rows: kept},
		// -0 and 0: different JSON texts, one SQL value
		"clash": {table: oldTable, index: index124, rows: []string{
			`{"$s":{"p":{"_id":{"t":"double"}},"$k":["_id"]},"_id":-0.0}`,
			`{"$s":{"p":{"_id":{"t":"double"}},"$k":["_id"]},"_id":0.0}`,
		}, wantIndex: index124},
	}

	tables := map[string]string{}

	for coll, tc := range cases {
		_, err = r.CollectionCreate(ctx, &CollectionCreateParams{DBName: dbName, Name: coll})
		require.NoError(t, err)

		table := r.CollectionGet(ctx, dbName, coll).TableName
		tables[coll] = table

		if tc.table != "" {
			_, err = db.ExecContext(ctx, fmt.Sprintf(`DROP TABLE %q`, table))
			require.NoError(t, err)
			_, err = db.ExecContext(ctx, fmt.Sprintf(tc.table, table))
			require.NoError(t, err)
		}

		if tc.index != "" {
			_, err = db.ExecContext(ctx, fmt.Sprintf(`DROP INDEX IF EXISTS %q`, table+"__id_"))
			require.NoError(t, err)
			_, err = db.ExecContext(ctx, fmt.Sprintf(tc.index, table+"__id_", table))
			require.NoError(t, err)
		}

		// as a release without the columns inserts
		for _, doc := range tc.rows {
			_, err = db.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %q (%s) VALUES (?)`, table, DefaultColumn), doc)
			require.NoError(t, err)
		}
	}

	r.Close()

	r, err = NewRegistry(uri, 100, testutil.Logger(t), sp)
	require.NoError(t, err)
	t.Cleanup(r.Close)

	db = r.DatabaseGetExisting(ctx, dbName)
	require.NotNil(t, db)

	for coll, tc := range cases {
		table := tables[coll]

		want := IDIndexSQL(table, table+"__id_")
		if tc.wantIndex != "" {
			want = fmt.Sprintf(tc.wantIndex, table+"__id_", table)
		}

		var sql string
		err = db.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?`, table+"__id_").Scan(&sql)
		require.NoError(t, err)
		require.Equal(t, want, sql, coll)

		// every row is found by its columns, as IDText and IDType read them from the document
		var n, found int
		require.NoError(t, db.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*) FROM %q`, table)).Scan(&n))
		require.Equal(t, len(tc.rows), n, coll)

		q := fmt.Sprintf(`SELECT count(*) FROM %q WHERE %s IS %s AND %s IS %s`, table, IDTextColumn, IDText, IDTypeColumn, IDType)
		require.NoError(t, db.QueryRowContext(ctx, q).Scan(&found))
		require.Equal(t, n, found, coll)

		// and through an index
		var plan string
		q = fmt.Sprintf(`EXPLAIN QUERY PLAN SELECT * FROM %q WHERE (%s, %s) = ('a', 'text')`, table, IDTextColumn, IDTypeColumn)
		var id, parent, notused int
		require.NoError(t, db.QueryRowContext(ctx, q).Scan(&id, &parent, &notused, &plan))
		require.Contains(t, plan, "USING INDEX", coll)
	}

	// the new index is as unique as the old one
	_, err = db.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %q (%s, %s, %s) VALUES (?, %s)`,
		tables["v124"], DefaultColumn, IDTextColumn, IDTypeColumn, IDColumnValues), kept[0], `"a"`, `"a"`)
	require.ErrorContains(t, err, "UNIQUE constraint failed")

	// a second start finds the tables carried over
	r.Close()

	r, err = NewRegistry(uri, 100, testutil.Logger(t), sp)
	require.NoError(t, err)
	t.Cleanup(r.Close)
}
