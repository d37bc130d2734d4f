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

package backends

import (
	"math"

	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// IDBound is one bound of a range of string _id values: Op is one of the SQL operators
// `>`, `>=`, `<` and `<=`, and Value a string; or Op is `IN`, and In the strings _id is one of.
type IDBound struct {
	Op    string
	Value string
	In    []string
}

// idOps maps the query operators of a string _id range to SQL.
var idOps = map[string]string{"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}

// IDRange returns the bounds that filter puts on string _id values, when its _id condition is an
// operator document of nothing but $gt, $gte, $lt and $lte with string values and $in with a
// non-empty array of strings, such as {_id: {$gte: "a", $lt: "b"}} or {_id: {$in: ["a", "b"]}}.
// Such a condition matches only documents whose _id is a string (a comparison matches values of
// its operand's type only) that is within every bound, comparing UTF-8 bytes; a backend can select
// them with an index on the _id string.
//
// exact reports whether filter has no other condition, so that the bounds select exactly the
// documents that filter does; otherwise they select a superset that the handler filters.
//
// It returns no bounds for any other filter.
func IDRange(filter *types.Document) (bounds []IDBound, exact bool) {
	v, _ := filter.Get("_id")

	cond, ok := v.(*types.Document)
	if !ok || cond.Len() == 0 {
		return nil, false
	}

	iter := cond.Iterator()
	defer iter.Close()

	for {
		op, value, err := iter.Next()
		if err != nil {
			break
		}

		if op == "$in" {
			in := idStrings(value)
			if in == nil {
				return nil, false
			}

			bounds = append(bounds, IDBound{Op: "IN", In: in})

			continue
		}

		s, ok := value.(string)
		if !ok || idOps[op] == "" {
			return nil, false
		}

		bounds = append(bounds, IDBound{Op: idOps[op], Value: s})
	}

	return bounds, filter.Len() == 1
}

// maxIDIn is the most values of a $in that IDRange returns: each is an SQL parameter, and the
// number of those is limited.
const maxIDIn = 1000

// idStrings returns the values of v when it is a non-empty array of at most maxIDIn strings, and
// nil otherwise.
func idStrings(v any) []string {
	arr, ok := v.(*types.Array)
	if !ok || arr.Len() == 0 || arr.Len() > maxIDIn {
		return nil
	}

	out := make([]string, arr.Len())

	for i := range out {
		if out[i], ok = must.NotFail(arr.Get(i)).(string); !ok {
			return nil
		}
	}

	return out
}

// IDPushdown returns the sort and limit that a backend may apply along with IDRange's bounds of
// filter (see QueryParams.IDSort and IDLimit), for a query with the given filter (the whole of it,
// not the part the handler pushes down), sort, skip and limit. They are zero when the query
// cannot be answered that way; the limit is zero unless the range is the whole filter.
func IDPushdown(filter, sort *types.Document, skip, limit int64) (idSort, idLimit int64) {
	bounds, exact := IDRange(filter)
	if len(bounds) == 0 {
		return 0, 0
	}

	switch sort.Len() {
	case 0:
	case 1:
		v, _ := sort.Get("_id")
		idSort, _ = v.(int64)

		if idSort != 1 && idSort != -1 {
			return 0, 0
		}
	default:
		return 0, 0
	}

	if exact && limit > 0 && skip >= 0 && skip <= math.MaxInt64-limit {
		idLimit = skip + limit
	}

	return idSort, idLimit
}
