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
	IDColumn = DefaultColumn + "->'_id'"

	// IDTextColumn is the column of a document's _id as an SQL value (IDText): the text of a
	// string, unlike IDColumn's JSON text, so that strings compare as MongoDB compares them (by
	// UTF-8 bytes, where the JSON text of a string would put its escaped characters out of order).
	// It is the first column of the unique _id index, which therefore serves _id equality, $in and
	// ranges with an _id sort.
	IDTextColumn = backends.ReservedPrefix + "id"

	// IDTypeColumn is the column of the JSON type of a document's _id (IDType), the second column
	// of the unique _id index: with it, values of other types whose IDTextColumn is the same (a
	// string and an embedded document whose JSON text it is, true and 1) are different ids, as
	// they were when the index was on IDColumn.
	IDTypeColumn = backends.ReservedPrefix + "id_type"

	// IDText is the SQL expression of IDTextColumn's value for a document's JSON text.
	IDText = DefaultColumn + "->>'$._id'"

	// IDType is the SQL expression of IDTypeColumn's value for a document's JSON text.
	IDType = "json_type(" + DefaultColumn + ", '$._id')"

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
// FerretDB 1.24 created it on IDColumn (`_ferretdb_sjson->"_id"`), an expression of the
// document's JSON: every insert, update and delete parsed the whole document to find its index
// entry, and an _id range read by IDTextColumn needed a second index. The id is now stored
// beside the document, in IDTextColumn and IDTypeColumn, which the writer fills from the id
// alone (idColumns in package sqlite, which lookups compare them to as well); an update, which
// never changes an _id, leaves the index alone. One index on them serves equality, $in and
// ranges, and is as unique: two ids share both columns only when they share their JSON text,
// the -0 and 0 that MongoDB takes for one id aside.
// Registry.initCollections carries the tables of earlier releases over.
func IDIndexSQL(table, index string) string {
	return fmt.Sprintf(`CREATE UNIQUE INDEX %q ON %q (%s, %s)`, index, table, IDTextColumn, IDTypeColumn)
}

// IDColumnsDef is the definition of IDTextColumn and IDTypeColumn in a collection's table: the
// text column holds SQL values of any type, as IDText gives them (numbers order as numbers).
const IDColumnsDef = IDTextColumn + " ANY, " + IDTypeColumn + " TEXT"

// IDColumnValues is the SQL of the values of IDTextColumn and IDTypeColumn for an _id whose sjson
// text (sjson.MarshalSingleValue) is each of its two arguments: they equal IDText and IDType of
// the document, parsing only the id.
const IDColumnValues = "? ->> '$', json_type(?)"
