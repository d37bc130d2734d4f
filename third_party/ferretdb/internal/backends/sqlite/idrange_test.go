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
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/FerretDB/FerretDB/internal/backends"
	"github.com/FerretDB/FerretDB/internal/backends/sqlite/metadata"
	"github.com/FerretDB/FerretDB/internal/handler/sjson"
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/iterator"
	"github.com/FerretDB/FerretDB/internal/util/must"
	"github.com/FerretDB/FerretDB/internal/util/state"
	"github.com/FerretDB/FerretDB/internal/util/testutil"
)

// TestIDRangePushdown checks that an _id range with an _id sort and a limit is answered in SQL
// exactly (only string ids, in byte order, however their JSON text would sort), from the unique
// _id index without a sort step.
func TestIDRangePushdown(t *testing.T) {
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

	var docs []*types.Document
	for _, id := range []any{
		"a", `a"b`, "a<b", "a\x01", "b", "c", "d", "é",
		types.ObjectID{0xb0}, int32(7), must.NotFail(types.NewDocument("k", "b")),
	} {
		docs = append(docs, must.NotFail(types.NewDocument("_id", id)))
	}

	_, err = coll.InsertAll(ctx, &backends.InsertAllParams{Docs: docs})
	require.NoError(t, err)

	ids := func(qp *backends.QueryParams) []any {
		res, err := coll.Query(ctx, qp)
		require.NoError(t, err)

		got, err := iterator.ConsumeValues(res.Iter)
		require.NoError(t, err)

		out := []any{}
		for _, doc := range got {
			out = append(out, must.NotFail(doc.Get("_id")))
		}

		return out
	}

	rng := must.NotFail(types.NewDocument("_id", must.NotFail(types.NewDocument("$gte", "a", "$lt", "d"))))

	assert.Equal(t, []any{"a", "a\x01", `a"b`, "a<b", "b", "c"}, ids(&backends.QueryParams{Filter: rng, IDSort: 1}))
	assert.Equal(t, []any{"a", "a\x01", `a"b`}, ids(&backends.QueryParams{Filter: rng, IDSort: 1, IDLimit: 3}))
	assert.Equal(t, []any{"c", "b", "a<b"}, ids(&backends.QueryParams{Filter: rng, IDSort: -1, IDLimit: 3}))

	in := must.NotFail(types.NewDocument("_id", must.NotFail(types.NewDocument(
		"$in", must.NotFail(types.NewArray("d", `a"b`, "zz", "0000000000000000000000b0")),
	))))
	assert.Equal(t, []any{"d", `a"b`}, ids(&backends.QueryParams{Filter: in, IDSort: -1, IDLimit: 5}))

	gt := must.NotFail(types.NewDocument("_id", must.NotFail(types.NewDocument("$gt", "c"))))
	assert.Equal(t, []any{"é", "d"}, ids(&backends.QueryParams{Filter: gt, IDSort: -1, IDLimit: 5}))

	for _, dir := range []int64{1, -1} {
		res, err := coll.Explain(ctx, &backends.ExplainParams{Filter: rng, IDSort: dir, IDLimit: 50})
		require.NoError(t, err)
		assert.True(t, res.FilterPushdown && res.SortPushdown && res.LimitPushdown)

		plan := fmt.Sprint(must.NotFail(res.QueryPlanner.Get("Plan")))
		assert.Contains(t, plan, "__id_ (_ferretdb_id", "plan: %s", plan)
		assert.False(t, strings.Contains(plan, "TEMP B-TREE"), "plan: %s", plan)
	}
}

// TestIDRangeStringCheck checks the two ways an _id range query tells a string _id: by the start
// of the text sjson.Marshal writes (the fast path, which must match what Marshal writes for a
// string _id and for nothing else), and by the JSON path for a text of another layout.
func TestIDRangeStringCheck(t *testing.T) {
	t.Parallel()

	for _, id := range []any{"a", "", `a"b`, "é", types.ObjectID{0xb0}, int32(7), must.NotFail(types.NewDocument("k", "b"))} {
		b, err := sjson.Marshal(must.NotFail(types.NewDocument("_id", id, "x", "y")))
		require.NoError(t, err)

		_, isString := id.(string)
		assert.Equal(t, isString, strings.HasPrefix(string(b), stringIDPrefix), "%s", b)
	}

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

	_, err = coll.InsertAll(ctx, &backends.InsertAllParams{Docs: []*types.Document{
		must.NotFail(types.NewDocument("_id", "b1")),
		must.NotFail(types.NewDocument("_id", types.ObjectID{0xb2})),
	}})
	require.NoError(t, err)

	// Texts of other layouts, as another writer could store them (with the _id columns filled
	// from them): the schema after the fields, and with whitespace.
	u, err := url.Parse(uri)
	require.NoError(t, err)

	sqlDB, err := sql.Open("sqlite", "file:"+filepath.Join(u.Opaque, dbName+".sqlite"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = sqlDB.Close() })

	var table string
	require.NoError(t, sqlDB.QueryRowContext(ctx, `SELECT table_name FROM _ferretdb_collections`).Scan(&table))

	for _, text := range []string{
		`{"_id":"b3","$s":{"p":{"_id":{"t":"string"}},"$k":["_id"]}}`,
		`{ "$s": {"p": {"_id": {"t": "string"}}, "$k": ["_id"]}, "_id": "b4"}`,
		`{"_id":"0000000000000000000000b5","$s":{"p":{"_id":{"t":"objectId"}},"$k":["_id"]}}`,
	} {
		_, err = sqlDB.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %q (%s, %s, %s) VALUES (?1, ?1->>'$._id', json_type(?1, '$._id'))`,
			table, metadata.DefaultColumn, metadata.IDTextColumn, metadata.IDTypeColumn), text)
		require.NoError(t, err)
	}

	res, err := coll.Query(ctx, &backends.QueryParams{
		Filter: must.NotFail(types.NewDocument("_id", must.NotFail(types.NewDocument("$gte", "0", "$lt", "c")))),
		IDSort: 1,
	})
	require.NoError(t, err)

	got, err := iterator.ConsumeValues(res.Iter)
	require.NoError(t, err)

	var ids []any
	for _, doc := range got {
		ids = append(ids, must.NotFail(doc.Get("_id")))
	}

	assert.Equal(t, []any{"b1", "b3", "b4"}, ids)
}

// TestIDPushdown checks which queries get an _id sort and limit pushed down.
func TestIDPushdown(t *testing.T) {
	t.Parallel()

	doc := func(pairs ...any) *types.Document { return must.NotFail(types.NewDocument(pairs...)) }
	rng := doc("$gt", "a", "$lte", "z")

	for name, tc := range map[string]struct {
		filter, sort       *types.Document
		skip, limit        int64
		wantSort, wantLimt int64
	}{
		"Range":          {filter: doc("_id", rng), sort: doc("_id", int64(-1)), limit: 5, wantSort: -1, wantLimt: 5},
		"RangeSkip":      {filter: doc("_id", rng), sort: doc("_id", int64(1)), skip: 2, limit: 5, wantSort: 1, wantLimt: 7},
		"RangeNoSort":    {filter: doc("_id", rng), limit: 5, wantLimt: 5},
		"RangeNoLimit":   {filter: doc("_id", rng), sort: doc("_id", int64(1)), wantSort: 1},
		"OtherField":     {filter: doc("_id", rng, "x", int32(1)), sort: doc("_id", int64(1)), limit: 5, wantSort: 1},
		"OtherSort":      {filter: doc("_id", rng), sort: doc("x", int64(1)), limit: 5},
		"CompoundSort":   {filter: doc("_id", rng), sort: doc("_id", int64(1), "x", int64(1)), limit: 5},
		"NumberBound":    {filter: doc("_id", doc("$gt", "a", "$lt", int32(3))), limit: 5},
		"OtherOperator":  {filter: doc("_id", doc("$gt", "a", "$ne", "b")), limit: 5},
		"In":             {filter: doc("_id", doc("$in", must.NotFail(types.NewArray("a", "b")))), limit: 5, wantLimt: 5},
		"InRange":        {filter: doc("_id", doc("$in", must.NotFail(types.NewArray("a")), "$lt", "b")), limit: 5, wantLimt: 5},
		"InNumber":       {filter: doc("_id", doc("$in", must.NotFail(types.NewArray("a", int32(1))))), limit: 5},
		"InEmpty":        {filter: doc("_id", doc("$in", must.NotFail(types.NewArray()))), limit: 5},
		"Equality":       {filter: doc("_id", "a"), limit: 5},
		"NoFilter":       {sort: doc("_id", int64(1)), limit: 5},
		"EmptyCondition": {filter: doc("_id", doc()), limit: 5},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			s, l := backends.IDPushdown(tc.filter, tc.sort, tc.skip, tc.limit)
			assert.Equal(t, tc.wantSort, s, "sort")
			assert.Equal(t, tc.wantLimt, l, "limit")
		})
	}
}

// TestIDEqualityUsesIDIndex checks that an _id lookup is a search of the unique index on _id that
// FerretDB creates with every collection, for string and ObjectID ids alike.
func TestIDEqualityUsesIDIndex(t *testing.T) {
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

	oid := types.ObjectID{0xb0}
	_, err = coll.InsertAll(ctx, &backends.InsertAllParams{Docs: []*types.Document{
		must.NotFail(types.NewDocument("_id", "a", "v", int32(1))),
		must.NotFail(types.NewDocument("_id", oid, "v", int32(2))),
		must.NotFail(types.NewDocument("_id", "b", "v", int32(3))),
	}})
	require.NoError(t, err)

	for _, id := range []any{"a", oid} {
		filter := must.NotFail(types.NewDocument("_id", id))

		res, err := coll.Explain(ctx, &backends.ExplainParams{Filter: filter})
		require.NoError(t, err)
		assert.True(t, res.FilterPushdown)

		plan := fmt.Sprint(must.NotFail(res.QueryPlanner.Get("Plan")))
		assert.Contains(t, plan, "SEARCH", "plan: %s", plan)
		assert.Contains(t, plan, "__id_ (_ferretdb_id=? AND _ferretdb_id_type=?)", "plan: %s", plan)

		q, err := coll.Query(ctx, &backends.QueryParams{Filter: filter})
		require.NoError(t, err)

		got, err := iterator.ConsumeValues(q.Iter)
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, id, must.NotFail(got[0].Get("_id")))
	}
}
