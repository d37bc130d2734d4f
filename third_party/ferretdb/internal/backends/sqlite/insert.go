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
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/FerretDB/FerretDB/internal/backends/sqlite/metadata"
	"github.com/FerretDB/FerretDB/internal/handler/sjson"
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/lazyerrors"
	"github.com/FerretDB/FerretDB/internal/util/must"
)

// prepareInsertStatement returns a statement and arguments for inserting the given documents,
// each with its _id in metadata.IDTextColumn and metadata.IDTypeColumn.
//
// If capped is true, it returns a statement and arguments for inserting record IDs and documents.
func prepareInsertStatement(tableName string, capped bool, docs []*types.Document) (string, []any, error) {
	var args []any
	rows := make([]string, len(docs))

	for i, doc := range docs {
		b, err := sjson.Marshal(doc)
		if err != nil {
			return "", nil, lazyerrors.Error(err)
		}

		id, _ := doc.Get("_id")
		must.NotBeZero(id)

		idValues, idArgs := idColumns(id)

		if capped {
			rows[i] = "(?, ?, " + idValues + ")"
			args = append(append(args, doc.RecordID(), string(b)), idArgs...)

			continue
		}

		rows[i] = "(?, " + idValues + ")"
		args = append(append(args, string(b)), idArgs...)
	}

	columns := []string{metadata.DefaultColumn, metadata.IDTextColumn, metadata.IDTypeColumn}
	if capped {
		columns = append([]string{metadata.RecordIDColumn}, columns...)
	}

	return fmt.Sprintf(
		`INSERT INTO %q (%s) VALUES %s`,
		tableName,
		strings.Join(columns, ", "),
		strings.Join(rows, ", "),
	), args, nil
}

// idColumns returns the SQL of the values of metadata.IDTextColumn and metadata.IDTypeColumn for
// an _id, and their arguments: what an insert fills the columns with, and what an equality
// compares them to (idEquals). A string (valid UTF-8, without NUL) and an ObjectID are text, as
// SQLite reads them from sjson's JSON (the string itself, the ObjectID's hex), given as they are:
// SQLite parses a statement anew every time it runs it, and two JSON functions per document
// tripled the parse of an insert of many documents. SQLite reads other ids from their sjson text
// (metadata.IDColumnValues).
func idColumns(id any) (string, []any) {
	switch id := id.(type) {
	case string:
		if utf8.ValidString(id) && !strings.ContainsRune(id, 0) {
			return "?, 'text'", []any{id}
		}
	case types.ObjectID:
		return "?, 'text'", []any{hex.EncodeToString(id[:])}
	}

	b := string(must.NotFail(sjson.MarshalSingleValue(id)))

	return metadata.IDColumnValues, []any{b, b}
}
