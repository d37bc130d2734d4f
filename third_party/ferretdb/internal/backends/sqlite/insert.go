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
	"strings"

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

		idJSON, err := sjson.MarshalSingleValue(id)
		if err != nil {
			return "", nil, lazyerrors.Error(err)
		}

		if capped {
			rows[i] = "(?, ?, " + metadata.IDColumnValues + ")"
			args = append(args, doc.RecordID(), string(b), string(idJSON), string(idJSON))

			continue
		}

		rows[i] = "(?, " + metadata.IDColumnValues + ")"
		args = append(args, string(b), string(idJSON), string(idJSON))
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
