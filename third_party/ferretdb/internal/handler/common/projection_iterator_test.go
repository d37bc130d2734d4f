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

package common

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/iterator"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// TestProjectionIterator: without a projection, every document comes out as it went in (the
// iterator hands it on rather than a copy); with one, the projection applies.
func TestProjectionIterator(t *testing.T) {
	t.Parallel()

	docs := func() []*types.Document {
		return []*types.Document{
			must.NotFail(types.NewDocument("_id", "a", "x", int32(1), "y", must.NotFail(types.NewDocument("z", "b")))),
			must.NotFail(types.NewDocument("_id", "b", "y", "c")),
		}
	}

	for name, tc := range map[string]struct {
		projection *types.Document
		want       []*types.Document
	}{
		"None":  {projection: nil, want: docs()},
		"Empty": {projection: types.MakeDocument(0), want: docs()},
		"Exclusion": {projection: must.NotFail(types.NewDocument("y", false)), want: []*types.Document{
			must.NotFail(types.NewDocument("_id", "a", "x", int32(1))),
			must.NotFail(types.NewDocument("_id", "b")),
		}},
		"Inclusion": {projection: must.NotFail(types.NewDocument("_id", false, "y", true)), want: []*types.Document{
			must.NotFail(types.NewDocument("y", must.NotFail(types.NewDocument("z", "b")))),
			must.NotFail(types.NewDocument("y", "c")),
		}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			in := docs()
			closer := iterator.NewMultiCloser()
			defer closer.Close()

			iter, err := ProjectionIterator(iterator.Values(iterator.ForSlice(in)), closer, tc.projection, nil)
			require.NoError(t, err)

			got, err := iterator.ConsumeValues(iter)
			require.NoError(t, err)
			require.Len(t, got, len(tc.want))

			for i := range got {
				assert.Equal(t, tc.want[i].Keys(), got[i].Keys())
				assert.Equal(t, tc.want[i].Values(), got[i].Values())
			}
		})
	}
}
