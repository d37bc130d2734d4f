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

// Package metadata provides access to databases and collections information.
package metadata

import (
	"fmt"

	"github.com/FerretDB/FerretDB/internal/backends"
)

// Collection will probably have a method for getting column name / SQLite path expression for the given document field
// once we implement field extraction.
// IDColumn probably should go away.
// TODO https://github.com/FerretDB/FerretDB/issues/226

const (
	// DefaultColumn is a column name for all fields.
	DefaultColumn = backends.ReservedPrefix + "sjson"

	// IDColumn is a SQLite path expression for _id field: its JSON text, as sjson writes it.
	//
	// It tells an _id exactly (a string from a document with the same JSON text, say), but no
	// index is on it: lookups find their rows by IDTextColumn, from the unique _id index, and
	// check this on the few rows found (see IDIndexSQL).
	IDColumn = DefaultColumn + "->'_id'"

	// IDTextColumn is the _id of a document as an SQL value: the text of a string, unlike
	// IDColumn's JSON text, so that strings compare as MongoDB compares them (by UTF-8 bytes,
	// where the JSON text of a string would put its escaped characters out of order). It is the
	// first column of the unique _id index, which therefore serves _id equality, $in and ranges
	// with an _id sort.
	IDTextColumn = DefaultColumn + "->>'$._id'"

	// IDTypeColumn is the JSON type of a document's _id, the second column of the unique _id
	// index: with it, values of other types whose IDTextColumn is the same (a string and an
	// embedded document whose JSON text it is, true and 1) are different ids, as they were when
	// the index was on IDColumn.
	IDTypeColumn = "json_type(" + DefaultColumn + ", '$._id')"

	// RecordIDColumn is a name for RecordID column to store capped collection record id.
	RecordIDColumn = backends.ReservedPrefix + "record_id"
)

// Collection represents collection metadata.
//
// Collection value should be immutable to avoid data races.
// Use [deepCopy] to replace the whole value instead of modifying fields of existing value.
type Collection struct {
	Name      string
	TableName string
	Settings  Settings
}

// Capped returns true if collection is capped.
func (c Collection) Capped() bool {
	return c.Settings.CappedSize > 0
}

// deepCopy returns a deep copy.
func (c *Collection) deepCopy() *Collection {
	if c == nil {
		return nil
	}

	return &Collection{
		Name:      c.Name,
		TableName: c.TableName,
		Settings:  c.Settings.deepCopy(),
	}
}

// IDIndexSQL is the statement that creates the unique _id index (backends.DefaultIndexName) of
// a collection's table, named index.
//
// FerretDB 1.24 created it on IDColumn (`_ferretdb_sjson->"_id"`), and an _id range read by
// IDTextColumn needed a second index that every insert also paid for (a second extraction of
// _id from the document's JSON, a second b-tree entry, more pages in each commit). On
// (IDTextColumn, IDTypeColumn), one index serves both, and is as unique: two ids share both
// columns only when they share their JSON text, the -0 and 0 that MongoDB takes for one id aside.
// Registry.initCollections rebuilds the indexes of earlier releases.
func IDIndexSQL(table, index string) string {
	return fmt.Sprintf(`CREATE UNIQUE INDEX %q ON %q (%s, %s)`, index, table, IDTextColumn, IDTypeColumn)
}
