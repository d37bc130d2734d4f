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
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/FerretDB/FerretDB/internal/backends"
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/iterator"
	"github.com/FerretDB/FerretDB/internal/util/must"
	"github.com/FerretDB/FerretDB/internal/util/state"
	"github.com/FerretDB/FerretDB/internal/util/testutil"
)

// TestInsertAllIsAtomic checks that InsertAll inserts all its documents or none, whether they fit
// in one statement (run without a transaction around it) or take several (run in one
// transaction): the handler inserts a failed batch again one document at a time, and would
// otherwise report the documents inserted before the duplicate as duplicates themselves.
func TestInsertAllIsAtomic(t *testing.T) {
	t.Parallel()

	ctx := testutil.Ctx(t)

	sp, err := state.NewProvider("")
	require.NoError(t, err)

	b, err := NewBackend(&NewBackendParams{URI: testutil.TestSQLiteURI(t, ""), L: testutil.Logger(t), P: sp, BatchSize: 3})
	require.NoError(t, err)
	t.Cleanup(b.Close)

	db, err := b.Database(testutil.DatabaseName(t))
	require.NoError(t, err)

	docs := func(ids ...string) []*types.Document {
		var out []*types.Document
		for _, id := range ids {
			out = append(out, must.NotFail(types.NewDocument("_id", id, "v", int32(1))))
		}

		return out
	}

	for name, tc := range map[string]struct {
		ids []string
	}{
		"OneStatement":   {ids: []string{"a", "b", "taken"}},
		"OneDocument":    {ids: []string{"taken"}},
		"SeveralBatches": {ids: []string{"a", "b", "c", "d", "taken"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			coll, err := db.Collection(testutil.CollectionName(t))
			require.NoError(t, err)

			_, err = coll.InsertAll(ctx, &backends.InsertAllParams{Docs: docs("taken")})
			require.NoError(t, err)

			_, err = coll.InsertAll(ctx, &backends.InsertAllParams{Docs: docs(tc.ids...)})
			assert.True(t, backends.ErrorCodeIs(err, backends.ErrorCodeInsertDuplicateID), "%v", err)

			res, err := coll.Query(ctx, nil)
			require.NoError(t, err)

			got, err := iterator.ConsumeValues(res.Iter)
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, "taken", must.NotFail(got[0].Get("_id")))

			_, err = coll.InsertAll(ctx, &backends.InsertAllParams{Docs: docs("x", "y", "z", "w")})
			require.NoError(t, err)

			res, err = coll.Query(ctx, nil)
			require.NoError(t, err)

			got, err = iterator.ConsumeValues(res.Iter)
			require.NoError(t, err)
			assert.Len(t, got, 5)
		})
	}
}
