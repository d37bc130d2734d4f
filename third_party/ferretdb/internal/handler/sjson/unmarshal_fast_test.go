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
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/must"
	"github.com/FerretDB/FerretDB/internal/util/testutil"
)

// largeDocument is a document of about 4 KB with nested documents and arrays, every type the
// fast path decodes, and strings it leaves to encoding/json.
func largeDocument() *types.Document {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	id := types.ObjectID{0x65, 0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8, 0x9, 0xa, 0xb}

	items := types.MakeArray(0)

	for i := range 12 {
		items.Append(must.NotFail(types.NewDocument(
			"id", id,
			"k", "item_"+strings.Repeat("x", i),
			"n", int32(i),
			"w", float64(i)/3,
			"at", created.Add(time.Duration(i)*time.Hour),
			"tags", must.NotFail(types.NewArray("a", "b", int64(i), true, types.Null)),
			"meta", must.NotFail(types.NewDocument("ok", i%2 == 0, "ts", types.Timestamp(i))),
		)))
	}

	return must.NotFail(types.NewDocument(
		"_id", "ctx|obj_00000001|0000000001",
		"title", "a title with <html> & \"quotes\" and ünïcödé",
		"body", strings.Repeat("the body of a larger document, plain ASCII. ", 20),
		"items", items,
		"empty", must.NotFail(types.NewDocument()),
		"emptyArray", types.MakeArray(0),
		"nested", must.NotFail(types.NewDocument("a", must.NotFail(types.NewDocument("b", must.NotFail(types.NewArray(
			must.NotFail(types.NewArray(int32(1), int32(2))), must.NotFail(types.NewDocument()),
		)))))),
		"n", int64(math.MaxInt64),
	))
}

// edgeDocuments are documents with every kind of value and the edge cases of each.
func edgeDocuments() []*types.Document {
	docs := []*types.Document{
		must.NotFail(types.NewDocument()),
		postingDocument(),
		largeDocument(),
	}

	for _, v := range []any{
		"", "plain", "<>&", "quote\" backslash\\ slash/", "\x00\x01\n\t\x1f\x7f", "ünïcödé ✓ 𝄞", "\u2028\u2029",
		strings.Repeat("long ", 1000),
		int32(0), int32(-1), int32(math.MaxInt32), int32(math.MinInt32),
		int64(0), int64(math.MaxInt64), int64(math.MinInt64),
		0.0, math.Copysign(0, -1), 1.5, -1e300, 1e-300, math.MaxFloat64, math.SmallestNonzeroFloat64, 42.0, 1e21, 1e20,
		true, false, types.Null,
		time.UnixMilli(0), time.UnixMilli(-1), time.UnixMilli(1764300000123), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		types.Timestamp(0), types.Timestamp(math.MaxUint64),
		types.ObjectID{}, types.ObjectID{0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88, 0x77, 0x66, 0x55, 0x44},
		types.Binary{Subtype: types.BinaryGeneric, B: []byte("bytes")},
		types.Binary{Subtype: types.BinaryUser, B: []byte{}},
		types.Regex{Pattern: "^a.*b$", Options: "i"},
		must.NotFail(types.NewArray()),
		must.NotFail(types.NewArray(types.Null, types.Null)),
		must.NotFail(types.NewArray(must.NotFail(types.NewArray()), must.NotFail(types.NewDocument()))),
		must.NotFail(types.NewDocument("$s", "a key the top level cannot have", "x.y", int32(1), "", "empty key")),
		must.NotFail(types.NewDocument("ünï", "key with non-ASCII", "<&>", "key with escapes")),
	} {
		docs = append(docs, must.NotFail(types.NewDocument("_id", int32(1), "v", v)))
	}

	return docs
}

// requireSameDecode checks that Unmarshal and the encoding/json decoding agree on data:
// the same document, or both an error.
func requireSameDecode(tb testing.TB, data []byte) {
	tb.Helper()

	expected, expectedErr := unmarshalDecoder(data)
	actual, actualErr := Unmarshal(data)

	if expectedErr != nil {
		require.Error(tb, actualErr, "%s", data)
		return
	}

	require.NoError(tb, actualErr, "%s", data)

	// DeepEqual also compares the documents' key maps, time locations and nil versus empty
	require.True(tb, reflect.DeepEqual(expected, actual), "%s\nexpected %#v\nactual   %#v", data, expected, actual)
	testutil.AssertEqual(tb, expected, actual)
}

// TestUnmarshalFastSameAsDecoder round-trips every kind of value through Marshal, then checks
// both decodings agree, and that the fast path took the documents it is meant for.
func TestUnmarshalFastSameAsDecoder(t *testing.T) {
	t.Parallel()

	for _, doc := range edgeDocuments() {
		data, err := Marshal(doc)
		require.NoError(t, err)

		requireSameDecode(t, data)

		actual, err := Unmarshal(data)
		require.NoError(t, err)
		testutil.AssertEqual(t, doc, actual)
	}

	for _, doc := range []*types.Document{must.NotFail(types.NewDocument()), postingDocument(), largeDocument()} {
		_, ok := unmarshalFast(must.NotFail(Marshal(doc)))
		require.True(t, ok, "the fast path must decode what Marshal writes")
	}
}

// TestUnmarshalFastEdges checks inputs Marshal does not write, which the fast path must hand
// to encoding/json: the results (or errors) stay those of encoding/json.
func TestUnmarshalFastEdges(t *testing.T) {
	t.Parallel()

	for _, s := range unmarshalEdgeInputs {
		requireSameDecode(t, []byte(s))
	}
}

// unmarshalEdgeInputs are sjson documents outside the shape Marshal writes, some valid, some not.
var unmarshalEdgeInputs = []string{
	``, `null`, `{}`, `[]`, `{"$s":{}}`, `{"$s":{}} `, ` {"$s":{}}`, `{"$s":{}}x`, `{"$s":null}`,
	`{"$s":{"p":{"a":{"t":"int"}},"$k":["a"]},"a":1}`,
	`{"$s":{"$k":["a"],"p":{"a":{"t":"int"}}},"a":1}`,
	`{"$s":{"p":{"a":{"t":"int"}},"$k":["a"]},"a":1,"a":2}`,
	`{"$s":{"p":{"a":{"t":"int"}},"$k":["a","a"]},"a":1,"a":2}`,
	`{"$s":{"p":{"a":{"t":"int"},"b":{"t":"int"}},"$k":["a","b"]},"b":2,"a":1}`,
	`{"$s":{"p":{"a":{"t":"int"},"b":{"t":"int"}},"$k":["b","a"]},"a":1,"b":2}`,
	`{"$s":{"p":{"a":{"t":"int"}},"$k":["a"]},"a":1.0}`,
	`{"$s":{"p":{"a":{"t":"int"}},"$k":["a"]},"a":2147483648}`,
	`{"$s":{"p":{"a":{"t":"int"}},"$k":["a"]},"a":-0}`,
	`{"$s":{"p":{"a":{"t":"int"}},"$k":["a"]},"a":01}`,
	`{"$s":{"p":{"a":{"t":"int"}},"$k":["a"]},"a":null}`,
	`{"$s":{"p":{"a":{"t":"int"}},"$k":["a"]},"a":"1"}`,
	`{"$s":{"p":{"a":{"T":"int"}},"$k":["a"]},"a":1}`,
	`{"$s":{"P":{"a":{"t":"int"}},"$k":["a"]},"a":1}`,
	`{"$s":{"p":{"a":{"t":"int","t":"long"}},"$k":["a"]},"a":1}`,
	`{"$s":{"p":{"a":{"t":"foo"}},"$k":["a"]},"a":null}`,
	`{"$s":{"p":{"a":{"t":"foo"}},"$k":["a"]},"a":1}`,
	`{"$s":{"p":{"a":null},"$k":["a"]},"a":null}`,
	`{"$s":{"p":{},"$k":["a"]},"a":null}`,
	`{"$s":{"p":{"a":{"t":"double"}},"$k":["a"]},"a":1e400}`,
	`{"$s":{"p":{"a":{"t":"double"}},"$k":["a"]},"a":-0.0e-0}`,
	`{"$s":{"p":{"a":{"t":"double"}},"$k":["a"]},"a":1.}`,
	`{"$s":{"p":{"a":{"t":"long"}},"$k":["a"]},"a":9223372036854775808}`,
	`{"$s":{"p":{"a":{"t":"timestamp"}},"$k":["a"]},"a":-1}`,
	`{"$s":{"p":{"a":{"t":"timestamp"}},"$k":["a"]},"a":18446744073709551615}`,
	`{"$s":{"p":{"a":{"t":"date"}},"$k":["a"]},"a":-62135596800000}`,
	`{"$s":{"p":{"a":{"t":"objectId"}},"$k":["a"]},"a":"0102030405060708090A0B0C"}`,
	`{"$s":{"p":{"a":{"t":"objectId"}},"$k":["a"]},"a":"0102030405060708090a0b"}`,
	`{"$s":{"p":{"a":{"t":"objectId"}},"$k":["a"]},"a":"\u00302030405060708090a0b0c"}`,
	`{"$s":{"p":{"a":{"t":"bool"}},"$k":["a"]},"a":tru}`,
	`{"$s":{"p":{"a":{"t":"null"}},"$k":["a"]},"a":1}`,
	`{"$s":{"p":{"a":{"t":"string"}},"$k":["a"]},"a":"\ud834\udd1e \ud800 \u0041"}`,
	`{"$s":{"p":{"a":{"t":"string"}},"$k":["a"]},"a":"tab	in string"}`,
	"{\"$s\":{\"p\":{\"a\":{\"t\":\"string\"}},\"$k\":[\"a\"]},\"a\":\"\xff\xfe invalid UTF-8\"}",
	"{\"$s\":{\"p\":{\"\xff\":{\"t\":\"string\"}},\"$k\":[\"\xff\"]},\"\xff\":\"invalid UTF-8 key\"}",
	`{"$s":{"p":{"\u0061":{"t":"string"}},"$k":["a"]},"\u0061":"x"}`,
	`{"$s":{"p":{"a":{"t":"object","$s":{}}},"$k":["a"]},"a":{}}`,
	`{"$s":{"p":{"a":{"t":"object","$s":{"p":{"b":{"t":"int"}},"$k":["b"]}}},"$k":["a"]},"a":{}}`,
	`{"$s":{"p":{"a":{"t":"object"}},"$k":["a"]},"a":{}}`,
	`{"$s":{"p":{"a":{"t":"object","$s":{}}},"$k":["a"]},"a":{"b":1}}`,
	`{"$s":{"p":{"a":{"t":"object","$s":{"p":{"$s":{"t":"int"}},"$k":["$s"]}}},"$k":["a"]},"a":{"$s":1}}`,
	`{"$s":{"p":{"a":{"t":"array","i":[]}},"$k":["a"]},"a":[]}`,
	`{"$s":{"p":{"a":{"t":"array"}},"$k":["a"]},"a":[]}`,
	`{"$s":{"p":{"a":{"t":"array","i":null}},"$k":["a"]},"a":[]}`,
	`{"$s":{"p":{"a":{"t":"array","i":[{"t":"int"}]}},"$k":["a"]},"a":[]}`,
	`{"$s":{"p":{"a":{"t":"array","i":[null]}},"$k":["a"]},"a":[null]}`,
	`{"$s":{"p":{"a":{"t":"array","i":[{"t":"int"},{"t":"string"}]}},"$k":["a"]},"a":[1,"x"]}`,
	`{"$s":{"p":{"a":{"t":"int","i":[]}},"$k":["a"]},"a":1}`,
	`{"$s":{"p":{"a":{"t":"binData","s":0}},"$k":["a"]},"a":"AAE="}`,
	`{"$s":{"p":{"a":{"t":"regex","o":"i"}},"$k":["a"]},"a":"^x"}`,
	`{"$s":{"p":{"a":{"t":"int"}},"$k":["a"]},"a":1,"$s":{}}`,
	`{"$s":{"p":{"$s":{"t":"int"}},"$k":["$s"]},"$s":1}`,
	`{"$s":{"p":{"a":{"t":"int"}},"$k":["a"],"x":1},"a":1}`,
}

// FuzzUnmarshalFast checks Unmarshal decodes arbitrary input as encoding/json does.
func FuzzUnmarshalFast(f *testing.F) {
	for _, doc := range edgeDocuments() {
		f.Add(must.NotFail(Marshal(doc)))
	}

	for _, s := range unmarshalEdgeInputs {
		f.Add([]byte(s))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		requireSameDecode(t, data)
	})
}

// BenchmarkUnmarshalPosting measures Unmarshal of a document like those svc reads and updates
// most (about 500 bytes of sjson).
func BenchmarkUnmarshalPosting(b *testing.B) {
	benchmarkUnmarshal(b, postingDocument())
}

// BenchmarkUnmarshalLarge measures Unmarshal of a document of about 4 KB with nested
// documents and arrays.
func BenchmarkUnmarshalLarge(b *testing.B) {
	benchmarkUnmarshal(b, largeDocument())
}

func benchmarkUnmarshal(b *testing.B, doc *types.Document) {
	data := must.NotFail(Marshal(doc))

	for name, unmarshal := range map[string]func([]byte) (*types.Document, error){
		"Decoder": unmarshalDecoder,
		"Fast":    Unmarshal,
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))

			for range b.N {
				if _, err := unmarshal(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
