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

// TestIDIndexOfEarlierReleasesIsRebuilt checks that opening a store whose _id index is on
// IDColumn, as FerretDB 1.24 made it, rebuilds that index as IDIndexSQL with every row kept; and
// that a table whose rows the new index cannot hold keeps its old index.
func TestIDIndexOfEarlierReleasesIsRebuilt(t *testing.T) {
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

	rows := map[string][]string{
		"kept": {
			`{"$s":{"p":{"_id":{"t":"string"}},"$k":["_id"]},"_id":"a"}`,
			`{"$s":{"p":{"_id":{"t":"string"}},"$k":["_id"]},"_id":"1"}`,
			`{"$s":{"p":{"_id":{"t":"int"}},"$k":["_id"]},"_id":1}`,
			`{"$s":{"p":{"_id":{"t":"bool"}},"$k":["_id"]},"_id":true}`,
		},
		// -0 and 0: different JSON texts, one SQL value
		"clash": {
			`{"$s":{"p":{"_id":{"t":"double"}},"$k":["_id"]},"_id":-0.0}`,
			`{"$s":{"p":{"_id":{"t":"double"}},"$k":["_id"]},"_id":0.0}`,
		},
	}

	tables := map[string]string{}

	for coll, docs := range rows {
		_, err = r.CollectionCreate(ctx, &CollectionCreateParams{DBName: dbName, Name: coll})
		require.NoError(t, err)

		table := r.CollectionGet(ctx, dbName, coll).TableName
		tables[coll] = table
		index := table + "__id_"

		_, err = db.ExecContext(ctx, fmt.Sprintf(`DROP INDEX %q`, index))
		require.NoError(t, err)
		_, err = db.ExecContext(ctx, fmt.Sprintf(`CREATE UNIQUE INDEX %q ON %q (_ferretdb_sjson->"_id")`, index, table))
		require.NoError(t, err)

		for _, doc := range docs {
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

	for coll, want := range map[string]string{
		"kept":  IDIndexSQL(tables["kept"], tables["kept"]+"__id_"),
		"clash": fmt.Sprintf(`CREATE UNIQUE INDEX %q ON %q (_ferretdb_sjson->"_id")`, tables["clash"]+"__id_", tables["clash"]),
	} {
		var sql string
		err = db.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?`, tables[coll]+"__id_").Scan(&sql)
		require.NoError(t, err)
		require.Equal(t, want, sql, coll)

		var n int
		require.NoError(t, db.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*) FROM %q`, tables[coll])).Scan(&n))
		require.Equal(t, len(rows[coll]), n, coll)
	}

	// the rebuilt index is as unique as the old one
	_, err = db.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %q (%s) VALUES (?)`, tables["kept"], DefaultColumn), rows["kept"][0])
	require.ErrorContains(t, err, "UNIQUE constraint failed")
}
