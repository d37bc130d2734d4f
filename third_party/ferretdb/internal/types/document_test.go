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

package types

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/FerretDB/FerretDB/internal/util/must"
)

func TestDocument(t *testing.T) {
	t.Parallel()

	t.Run("MethodsOnNil", func(t *testing.T) {
		t.Parallel()

		var doc *Document
		assert.Zero(t, doc.Len())
		assert.Nil(t, doc.Map())
		assert.Nil(t, doc.Keys())
		assert.Equal(t, "", doc.Command())

		value, _ := doc.Get("foo")
		assert.Nil(t, value)

		doc.Freeze()
	})

	t.Run("ZeroValues", func(t *testing.T) {
		t.Parallel()

		// to avoid {} != nil in tests
		assert.Nil(t, must.NotFail(NewDocument()).fields)
		assert.Nil(t, must.NotFail(NewDocument()).keys)

		var doc Document
		assert.Equal(t, 0, doc.Len())
		assert.Nil(t, doc.fields)
		assert.Equal(t, "", doc.Command())

		doc.Set("foo", Null)
		value, _ := doc.Get("foo")
		assert.Equal(t, Null, value)
		assert.Equal(t, "foo", doc.Command())

		doc.Freeze()
	})

	t.Run("NewDocument", func(t *testing.T) {
		t.Parallel()

		doc, err := NewDocument(42, 42)
		assert.Nil(t, doc)
		assert.EqualError(t, err, `types.NewDocument: invalid key type: int`)
	})

	t.Run("Invalid", func(t *testing.T) {
		t.Parallel()

		assert.Panics(t, func() {
			_, _ = NewDocument("foo", 42)
		})
	})

	t.Run("Freeze", func(t *testing.T) {
		t.Parallel()

		doc := must.NotFail(NewDocument("foo", int32(42)))

		doc.Freeze()

		assert.PanicsWithValue(t, "document is frozen and can't be modified", func() {
			doc.Set("foo", Null)
		})
	})

	t.Run("DeepCopy", func(t *testing.T) {
		t.Parallel()

		a := must.NotFail(NewDocument("foo", int32(42)))
		b := a.DeepCopy()
		assert.Equal(t, a, b)
		assert.NotSame(t, a, b)

		a.Set("foo", "bar")
		assert.NotEqual(t, a, b)
		assert.Equal(t, int32(42), must.NotFail(b.Get("foo")))
	})

	t.Run("Duplicates", func(t *testing.T) {
		t.Parallel()

		doc, err := NewDocument("foo", int32(1), "foo", int32(2))
		require.NoError(t, err)

		assert.True(t, doc.Has("foo"))
		assert.False(t, doc.Has("bar"))

		assert.PanicsWithValue(t, "types.Document.Get: key is duplicated: foo", func() {
			_, _ = doc.Get("foo")
		})
		assert.PanicsWithValue(t, "types.Document.Set: key is duplicated: foo", func() {
			doc.Set("foo", int32(3))
		})
		assert.PanicsWithValue(t, "types.Document.Remove: key is duplicated: foo", func() {
			doc.Remove("foo")
		})
	})

	t.Run("SortFieldsByKey", func(t *testing.T) {
		t.Parallel()

		t.Run("Lexicographic", func(t *testing.T) {
			t.Parallel()

			doc := must.NotFail(NewDocument(
				"foo", false,
				"bar", true,
			))

			doc.SortFieldsByKey()

			expected := must.NotFail(NewDocument(
				"bar", true,
				"foo", false,
			))
			assert.Equal(t, expected, doc)
		})

		t.Run("Numeric", func(t *testing.T) {
			t.Parallel()

			doc := must.NotFail(NewDocument(
				"42", false,
				"7", true,
			))

			doc.SortFieldsByKey()

			// TODO https://github.com/FerretDB/FerretDB/issues/2038
			expected := must.NotFail(NewDocument(
				"42", false,
				"7", true,
			))
			assert.Equal(t, expected, doc)
		})
	})

	t.Run("moveIDToTheFirstIndex", func(t *testing.T) {
		t.Parallel()

		doc := must.NotFail(NewDocument(
			"_id", int32(42),
			"foo", "bar",
			"baz", "qux",
		))
		assert.Equal(t, []string{"_id", "foo", "baz"}, doc.Keys())

		doc = must.NotFail(NewDocument(
			"foo", "bar",
			"_id", int32(42),
			"baz", "qux",
		))
		doc.moveIDToTheFirstIndex()
		assert.Equal(t, []string{"_id", "foo", "baz"}, doc.Keys())

		doc = must.NotFail(NewDocument(
			"foo", "bar",
			"baz", "qux",
			"_id", int32(42),
		))
		doc.moveIDToTheFirstIndex()
		assert.Equal(t, []string{"_id", "foo", "baz"}, doc.Keys())

		doc = must.NotFail(NewDocument(
			"foo", "bar",
			"baz", "qux",
		))
		doc.moveIDToTheFirstIndex()
		assert.Equal(t, []string{"foo", "baz"}, doc.Keys())
	})

	t.Run("SetByPath", func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			document *Document
			expected *Document
			key      string
			value    any
			err      error
		}{
			{
				name:     "path exists",
				document: must.NotFail(NewDocument("foo", must.NotFail(NewDocument("bar", int32(42))))),
				key:      "foo.bar",
				value:    "baz",
				expected: must.NotFail(NewDocument("foo", must.NotFail(NewDocument("bar", "baz")))),
			},
			{
				name:     "key not exists",
				document: must.NotFail(NewDocument("foo", must.NotFail(NewDocument("bar", int32(42))))),
				key:      "foo.baz",
				value:    "bar",
				expected: must.NotFail(NewDocument("foo", must.NotFail(NewDocument("bar", int32(42), "baz", "bar")))),
			},
			{
				name:     "path not exist",
				document: must.NotFail(NewDocument("foo", must.NotFail(NewDocument("bar", int32(42))))),
				key:      "foo.baz.bar",
				value:    "bar",
				expected: must.NotFail(NewDocument(
					"foo", must.NotFail(NewDocument(
						"bar", int32(42),
						"baz", must.NotFail(NewDocument("bar", "bar")),
					)),
				)),
			},
			{
				name:     "extend empty array with document",
				document: must.NotFail(NewDocument("v", must.NotFail(NewArray()))),
				key:      "v.2.foo",
				value:    "bar",
				expected: must.NotFail(NewDocument(
					"v", must.NotFail(NewArray(Null, Null, must.NotFail(NewDocument("foo", "bar")))),
				)),
			},
			{
				name:     "extend non-empty array with document",
				document: must.NotFail(NewDocument("v", must.NotFail(NewArray("a")))),
				key:      "v.2.foo",
				value:    "bar",
				expected: must.NotFail(NewDocument(
					"v", must.NotFail(NewArray("a", Null, must.NotFail(NewDocument("foo", "bar")))),
				)),
			},
			{
				name:     "extend non-empty array with scalar",
				document: must.NotFail(NewDocument("v", must.NotFail(NewArray("a")))),
				key:      "v.2",
				value:    "bar",
				expected: must.NotFail(NewDocument(
					"v", must.NotFail(NewArray("a", Null, "bar")),
				)),
			},
		} {
			tc := tc
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()

				path, err := NewPathFromString(tc.key)
				require.NoError(t, err)

				err = tc.document.SetByPath(path, tc.value)

				if tc.err != nil {
					assert.Equal(t, tc.err, err)
					return
				}
				require.NoError(t, err)

				assert.Equal(t, tc.expected, tc.document)
			})
		}
	})
}
