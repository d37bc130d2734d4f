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
	"fmt"
	"strconv"
	"strings"

	"github.com/FerretDB/FerretDB/internal/backends"
	"github.com/FerretDB/FerretDB/internal/backends/sqlite/metadata"
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// prepareSelectClause returns SELECT clause for default column of provided table name.
//
// For capped collection with onlyRecordIDs, it returns select clause for recordID column.
//
// For capped collection, it returns select clause for recordID column and default column.
func prepareSelectClause(table, comment string, capped, onlyRecordIDs bool) string {
	if comment != "" {
		comment = strings.ReplaceAll(comment, "/*", "/ *")
		comment = strings.ReplaceAll(comment, "*/", "* /")
		comment = `/* ` + comment + ` */`
	}

	if capped && onlyRecordIDs {
		return fmt.Sprintf(`SELECT %s %s FROM %q`, comment, metadata.RecordIDColumn, table)
	}

	if capped {
		return fmt.Sprintf(`SELECT %s %s, %s FROM %q`, comment, metadata.RecordIDColumn, metadata.DefaultColumn, table)
	}

	return fmt.Sprintf(`SELECT %s %s FROM %q`, comment, metadata.DefaultColumn, table)
}

// prepareOrderByClause returns ORDER BY clause for given sort document.
//
// The provided sort document should be already validated.
// Provided document should only contain a single value.
func prepareOrderByClause(sort *types.Document) string {
	if sort.Len() != 1 {
		return ""
	}

	v := must.NotFail(sort.Get("$natural"))
	var order string

	switch v.(int64) {
	case 1:
		// Ascending order
	case -1:
		order = " DESC"
	default:
		panic("not reachable")
	}

	return fmt.Sprintf(" ORDER BY %s%s", metadata.RecordIDColumn, order)
}

// IDTextColumn is the first column of the unique _id index (metadata.IDTextColumn): it serves
// _id equality, $in and ranges with an _id sort.
const IDTextColumn = metadata.IDTextColumn

// idEquals is the condition that a document's _id is id, with its arguments: both columns of the
// unique _id index equal to id's values (idColumns), found in it without a read of the document.
func idEquals(id any) (string, []any) {
	values, args := idColumns(id)
	return `(` + IDTextColumn + `, ` + metadata.IDTypeColumn + `) = (` + values + `)`, args
}

// idIsString is the condition that a document's _id is a string: strings are not the only values
// whose IDTextColumn is text (an ObjectID's is its hex, for one). The type is in the sjson
// schema, which sjson.Marshal writes first, with _id (always a document's first field) first in
// it: a text that starts with stringIDPrefix has a string _id, and SQLite then skips the JSON
// path after OR, which parses the whole document (a page of a range read spent most of its
// SQLite time there). A text of another layout is judged by the JSON path alone.
var idIsString = `(substr(` + metadata.DefaultColumn + `, 1, ` + strconv.Itoa(len(stringIDPrefix)) + `) = '` +
	stringIDPrefix + `' OR ` + metadata.DefaultColumn + `->>'$."$s".p._id.t' = 'string')`

// stringIDPrefix is how sjson.Marshal's text of a document with a string _id starts.
const stringIDPrefix = `{"$s":{"p":{"_id":{"t":"string"}`

// pushdown tells which parts of a query prepareQuery applied in SQL.
type pushdown struct {
	filter, sort, limit bool
}

// prepareQuery returns the WHERE, ORDER BY and LIMIT clauses, with their arguments, that apply
// filter, sort and limit (see backends.QueryParams; IDSort and IDLimit with an _id range of
// filter), and what of those they apply.
func prepareQuery(filter, sort *types.Document, limit, idSort, idLimit int64) (string, []any, pushdown) {
	var q string
	var args []any
	var p pushdown
	var idOrdered bool

	// that logic should exist in one place
	// TODO https://github.com/FerretDB/FerretDB/issues/3235
	if filter.Len() == 1 {
		v, _ := filter.Get("_id")
		switch v.(type) {
		case string, types.ObjectID:
			p.filter = true
			var cond string
			cond, args = idEquals(v)
			q = ` WHERE ` + cond
		}
	}

	bounds, _ := backends.IDRange(filter)
	if len(bounds) > 0 {
		p.filter = true
		conds := []string{idIsString}

		for _, b := range bounds {
			if b.Op != "IN" {
				conds = append(conds, fmt.Sprintf(`%s %s ?`, IDTextColumn, b.Op))
				args = append(args, b.Value)

				continue
			}

			conds = append(conds, fmt.Sprintf(`%s IN (%s)`, IDTextColumn, strings.Repeat(", ?", len(b.In))[2:]))
			for _, v := range b.In {
				args = append(args, v)
			}
		}

		q = ` WHERE ` + strings.Join(conds, ` AND `)
	}

	switch {
	case sort.Len() != 0:
		q += prepareOrderByClause(sort)
		p.sort = true
	case len(bounds) > 0 && idSort != 0:
		q += ` ORDER BY ` + IDTextColumn
		if idSort < 0 {
			q += ` DESC`
		}

		p.sort = true
		idOrdered = true
	}

	if limit == 0 && len(bounds) > 0 && (idSort == 0 || idOrdered) {
		limit = idLimit
	}

	if limit != 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
		p.limit = true
	}

	return q, args, p
}
