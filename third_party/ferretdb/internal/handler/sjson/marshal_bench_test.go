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
	"strings"
	"testing"
	"time"

	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// postingDocument is a document of about 500 bytes, mostly short strings, shaped like the
// documents svc writes most of (the postings of its memory index).
func postingDocument() *types.Document {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	return must.NotFail(types.NewDocument(
		"_id", "p|obj_00000001|stem042|20260102T030405.000000000Z|nd_00000000000000000001",
		"n", "nd_00000000000000000001",
		"t", "th_0000000000000001",
		"ty", "message",
		"a", "usr_0000000000000042",
		"c", created,
		"m", "msg_0000000000000001",
		"ti", "A short title of the thread",
		"x", strings.Repeat("an excerpt of the message body, cut at its start ", 5)[:240],
		"dl", int32(87),
		"f", int32(3),
		"nd", int64(1234),
		"fi", created,
	))
}

// BenchmarkMarshalPosting measures Marshal of a document like those svc inserts most.
func BenchmarkMarshalPosting(b *testing.B) {
	doc := postingDocument()

	for range b.N {
		if _, err := Marshal(doc); err != nil {
			b.Fatal(err)
		}
	}
}
