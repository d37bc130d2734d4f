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

package sjson

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// appendStrings are strings whose JSON encoding differs in every way encoding/json knows.
var appendStrings = []string{
	"", "a", "p|obj_1|stem|20260102T030405.000000000Z|nd_1", "a b~", `a"b`, `a\b`, "a<b>&c", "\x00\x01\x1f\x7f",
	"é", "\u2028\u2029", "\U0001F600", "\xff\xfe", "a\xc3", "tab\there", "line\nbreak", "$k", "_id",
}

// TestAppendMatchesEncodingJSON checks that the appending encoders write exactly the bytes of
// the encoders they stand in for: stored documents, and the `_id` values SQLite's indexes hold,
// must not change with them.
func TestAppendMatchesEncodingJSON(t *testing.T) {
	t.Parallel()

	for c := 0; c < 256; c++ {
		s := string([]byte{'x', byte(c), 'y'})
		assert.Equal(t, string(must.NotFail(json.Marshal(s))), string(appendString(nil, s)), "%q", s)
	}

	for _, s := range appendStrings {
		assert.Equal(t, string(must.NotFail(json.Marshal(s))), string(appendString([]byte("prefix"), s)[len("prefix"):]), "%q", s)
	}

	values := []any{
		int32(0), int32(-7), int32(math.MaxInt32), int32(math.MinInt32),
		int64(0), int64(math.MaxInt64), int64(math.MinInt64),
		time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC), time.UnixMilli(-1), time.Time{},
		types.ObjectID{}, types.ObjectID{0xb0, 0x01, 0xff}, true, false,
		1.5, 1e300, -0.25, types.Null, types.Binary{B: []byte("x"), Subtype: types.BinaryUser},
		types.Regex{Pattern: "^a<", Options: "i"}, types.Timestamp(42),
		must.NotFail(types.NewDocument("k", "v", "n", int32(1))), must.NotFail(types.NewArray("a", int32(1))),
	}
	for _, s := range appendStrings {
		values = append(values, s)
	}

	for _, v := range values {
		want, err := toSJSON(v).MarshalJSON()
		require.NoError(t, err)

		got, err := appendValue([]byte("prefix"), v)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got[len("prefix"):]), "value %#v", v)

		want, err = marshalElemForSingleValue(v)
		require.NoError(t, err)

		got, err = appendSchemaElem([]byte("prefix"), v)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got[len("prefix"):]), "schema of %#v", v)
	}
}

// TestMarshalPostingUnchanged checks Marshal's whole output for a document of every kind of
// field that the appending encoders write, against the sjson that FerretDB wrote before them.
func TestMarshalPostingUnchanged(t *testing.T) {
	t.Parallel()

	doc := must.NotFail(types.NewDocument(
		"_id", "p|o|a<b|1",
		"s", "é\u2028",
		"i", int32(-3),
		"l", int64(1)<<40,
		"d", time.UnixMilli(1767323045006).UTC(),
		"o", types.ObjectID{0xb0, 0x01},
		"b", true,
		"f", 0.5,
		"n", types.Null,
		"e", must.NotFail(types.NewDocument()),
		"a", must.NotFail(types.NewArray("x", int32(1))),
		"k<", "v",
	))

	want := `{"$s":{"p":{"_id":{"t":"string"},"s":{"t":"string"},"i":{"t":"int"},"l":{"t":"long"},` +
		`"d":{"t":"date"},"o":{"t":"objectId"},"b":{"t":"bool"},"f":{"t":"double"},"n":{"t":"null"},` +
		`"e":{"t":"object","$s":{}},"a":{"t":"array","i":[{"t":"string"},{"t":"int"}]},"k\u003c":{"t":"string"}},` +
		`"$k":["_id","s","i","l","d","o","b","f","n","e","a","k\u003c"]},` +
		`"_id":"p|o|a\u003cb|1","s":"é\u2028","i":-3,"l":1099511627776,"d":1767323045006,` +
		`"o":"b00100000000000000000000","b":true,"f":0.5,"n":null,"e":{},"a":["x",1],"k<":"v"}`

	got, err := Marshal(doc)
	require.NoError(t, err)
	assert.Equal(t, want, string(got))

	back, err := Unmarshal(got)
	require.NoError(t, err)
	assert.Equal(t, doc.Keys(), back.Keys())
}

// FuzzAppendString checks appendString against encoding/json for any string.
func FuzzAppendString(f *testing.F) {
	for _, s := range appendStrings {
		f.Add(s)
	}

	f.Fuzz(func(t *testing.T, s string) {
		if want, got := string(must.NotFail(json.Marshal(s))), string(appendString(nil, s)); want != got {
			t.Fatalf("appendString(%q) = %s, encoding/json: %s", s, got, want)
		}
	})
}
