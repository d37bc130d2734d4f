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
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"

	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// This file appends the sjson of the values a document holds most (strings, integers, dates,
// ObjectIDs) to a byte slice, instead of encoding each with encoding/json into a slice of its
// own and copying that: a document's Marshal was an allocation or more per field.
//
// The bytes must stay exactly those encoding/json writes. SQLite's `->` returns a JSON string
// with the escapes it was stored with, so a string encoded another way (`<` where encoding/json
// writes `\u003c`) would be another `_id` to the unique `_id` index and to `_id` lookups than
// the same string stored before. TestAppendMatchesEncodingJSON checks it.

// appendString appends s as a JSON string, as encoding/json encodes it.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		// encoding/json escapes control characters, '"', '\\' and (for HTML) '<', '>' and '&',
		// and checks everything above ASCII for invalid UTF-8 and U+2028, U+2029: leave those
		// strings to it.
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return append(b, must.NotFail(json.Marshal(s))...)
		}
	}

	b = append(b, '"')
	b = append(b, s...)

	return append(b, '"')
}

// appendValue appends v's sjson, as toSJSON(v).MarshalJSON() returns it.
func appendValue(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return appendString(b, v), nil
	case int32:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case time.Time:
		return strconv.AppendInt(b, v.UnixMilli(), 10), nil
	case types.ObjectID:
		b = append(b, '"')
		b = hex.AppendEncode(b, v[:])

		return append(b, '"'), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	}

	j, err := toSJSON(v).MarshalJSON()
	if err != nil {
		return nil, err
	}

	return append(b, j...), nil
}

// appendSchemaElem appends the schema elem of v, as marshalElemForSingleValue returns it.
func appendSchemaElem(b []byte, v any) ([]byte, error) {
	switch v.(type) {
	case string:
		return append(b, `{"t":"string"}`...), nil
	case int32:
		return append(b, `{"t":"int"}`...), nil
	case int64:
		return append(b, `{"t":"long"}`...), nil
	case time.Time:
		return append(b, `{"t":"date"}`...), nil
	case types.ObjectID:
		return append(b, `{"t":"objectId"}`...), nil
	case bool:
		return append(b, `{"t":"bool"}`...), nil
	}

	e, err := marshalElemForSingleValue(v)
	if err != nil {
		return nil, err
	}

	return append(b, e...), nil
}
