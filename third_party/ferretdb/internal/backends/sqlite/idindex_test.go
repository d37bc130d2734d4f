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

package sqlite

import (
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/FerretDB/FerretDB/internal/backends"
	"github.com/FerretDB/FerretDB/internal/backends/sqlite/metadata"
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/iterator"
	"github.com/FerretDB/FerretDB/internal/util/must"
	"github.com/FerretDB/FerretDB/internal/util/state"
	"github.com/FerretDB/FerretDB/internal/util/testutil"
)

// TestIDsOfOneText checks that ids whose IDTextColumn is the same SQL value but whose types
// differ (a string and the embedded document whose JSON text it is, "1" and 1, true and 1) are
// different documents to the unique _id index, to a lookup, to an update (of one document or of
// several) and to a delete, while a second document with the same id is refused.
func TestIDsOfOneText(t *testing.T) {
	t.Parallel()

	ctx := testutil.Ctx(t)

	sp, err := state.NewProvider("")
	require.NoError(t, err)

	b, err := NewBackend(&NewBackendParams{URI: testutil.TestSQLiteURI(t, ""), L: testutil.Logger(t), P: sp, BatchSize: 100})
	require.NoError(t, err)
	t.Cleanup(b.Close)

	db, err := b.Database(testutil.DatabaseName(t))
	require.NoError(t, err)

	coll, err := db.Collection(testutil.CollectionName(t))
	require.NoError(t, err)

	ids := []any{`{"k":"b"}`, must.NotFail(types.NewDocument("k", "b")), "1", int32(1), true}

	var docs []*types.Document
	for i, id := range ids {
		docs = append(docs, must.NotFail(types.NewDocument("_id", id, "v", int32(i))))
	}

	_, err = coll.InsertAll(ctx, &backends.InsertAllParams{Docs: docs})
	require.NoError(t, err)

	_, err = coll.InsertAll(ctx, &backends.InsertAllParams{Docs: []*types.Document{
		must.NotFail(types.NewDocument("_id", "1", "v", int32(9))),
	}})
	require.True(t, backends.ErrorCodeIs(err, backends.ErrorCodeInsertDuplicateID), "%v", err)

	values := func() map[string]int32 {
		t.Helper()

		res, err := coll.Query(ctx, nil)
		require.NoError(t, err)

		got, err := iterator.ConsumeValues(res.Iter)
		require.NoError(t, err)

		out := map[string]int32{}
		for _, doc := range got {
			out[types.FormatAnyValue(must.NotFail(doc.Get("_id")))] = must.NotFail(doc.Get("v")).(int32)
		}

		return out
	}

	// the backend pushes down lookups of string ids (and ObjectIDs) only
	for _, i := range []int{0, 2} {
		id := ids[i]
		res, err := coll.Query(ctx, &backends.QueryParams{Filter: must.NotFail(types.NewDocument("_id", id))})
		require.NoError(t, err)

		got, err := iterator.ConsumeValues(res.Iter)
		require.NoError(t, err)
		require.Len(t, got, 1, "%v", id)
		assert.Equal(t, int32(i), must.NotFail(got[0].Get("v")))
	}

	up, err := coll.UpdateAll(ctx, &backends.UpdateAllParams{Docs: []*types.Document{
		must.NotFail(types.NewDocument("_id", ids[1], "v", int32(11))),
		must.NotFail(types.NewDocument("_id", ids[3], "v", int32(13))),
	}})
	require.NoError(t, err)
	assert.Equal(t, int32(2), up.Updated)

	// one document: one statement, without a transaction around it
	up, err = coll.UpdateAll(ctx, &backends.UpdateAllParams{Docs: []*types.Document{
		must.NotFail(types.NewDocument("_id", ids[2], "v", int32(12))),
	}})
	require.NoError(t, err)
	assert.Equal(t, int32(1), up.Updated)

	for _, none := range []*backends.DeleteAllParams{{IDs: []any{}}, {RecordIDs: []int64{}}} {
		del, err := coll.DeleteAll(ctx, none)
		require.NoError(t, err)
		assert.Equal(t, int32(0), del.Deleted, "%+v", none)
	}

	del, err := coll.DeleteAll(ctx, &backends.DeleteAllParams{IDs: []any{ids[0], ids[4]}})
	require.NoError(t, err)
	assert.Equal(t, int32(1+1), del.Deleted)

	assert.Equal(t, map[string]int32{
		types.FormatAnyValue(ids[1]): 11,
		types.FormatAnyValue(ids[2]): 12,
		types.FormatAnyValue(ids[3]): 13,
	}, values())
}

// TestIDColumnsHoldTheDocumentsID checks that the _id columns InsertAll fills hold what SQLite
// reads from each document's JSON (metadata.IDText and IDType), for the ids InsertAll gives as
// they are (strings, ObjectIDs) and for those SQLite reads from the id's JSON, and that each
// document is found by its _id.
func TestIDColumnsHoldTheDocumentsID(t *testing.T) {
	t.Parallel()

	ctx := testutil.Ctx(t)

	sp, err := state.NewProvider("")
	require.NoError(t, err)

	uri := testutil.TestSQLiteURI(t, "")
	b, err := NewBackend(&NewBackendParams{URI: uri, L: testutil.Logger(t), P: sp, BatchSize: 100})
	require.NoError(t, err)
	t.Cleanup(b.Close)

	dbName := testutil.DatabaseName(t)
	db, err := b.Database(dbName)
	require.NoError(t, err)

	coll, err := db.Collection(testutil.CollectionName(t))
	require.NoError(t, err)

	ids := []any{
		"a", "", `a"b`, `back\slash`, "é", "日本", "🦓", "tab\there", "\u2028", "bad\xffutf8", "nul\x00byte",
		types.ObjectID{0xb0, 0x01}, int32(7), int64(-8), 1.5, 2.0, true, false, types.Null,
		must.NotFail(types.NewDocument("k", "b")),
	}

	var docs []*types.Document
	for i, id := range ids {
		docs = append(docs, must.NotFail(types.NewDocument("_id", id, "v", int32(i))))
	}

	_, err = coll.InsertAll(ctx, &backends.InsertAllParams{Docs: docs})
	require.NoError(t, err)

	u, err := url.Parse(uri)
	require.NoError(t, err)

	sqlDB, err := sql.Open("sqlite", "file:"+filepath.Join(u.Opaque, dbName+".sqlite"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sqlDB.Close() })

	var table string
	require.NoError(t, sqlDB.QueryRowContext(ctx, `SELECT table_name FROM _ferretdb_collections`).Scan(&table))

	rows, err := sqlDB.QueryContext(ctx, fmt.Sprintf(`SELECT %s->>'$.v', %s IS %s AND %s IS %s FROM %q`,
		metadata.DefaultColumn, metadata.IDTextColumn, metadata.IDText, metadata.IDTypeColumn, metadata.IDType, table))
	require.NoError(t, err)

	same := map[int]bool{}
	for rows.Next() {
		var v int
		var ok bool
		require.NoError(t, rows.Scan(&v, &ok))
		same[v] = ok
	}
	require.NoError(t, rows.Err())
	require.Len(t, same, len(ids))

	for i, id := range ids {
		assert.True(t, same[i], "%#v", id)

		if s, ok := id.(string); ok && !utf8.ValidString(s) {
			continue // sjson stores U+FFFD in place of the invalid byte: no document has this _id
		}

		res, err := coll.Query(ctx, &backends.QueryParams{Filter: must.NotFail(types.NewDocument("_id", id))})
		require.NoError(t, err)

		got, err := iterator.ConsumeValues(res.Iter)
		require.NoError(t, err)

		var vs []int32
		for _, doc := range got {
			if types.Compare(must.NotFail(doc.Get("_id")), id) == types.Equal {
				vs = append(vs, must.NotFail(doc.Get("v")).(int32))
			}
		}
		assert.Equal(t, []int32{int32(i)}, vs, "%#v", id)
	}
}
