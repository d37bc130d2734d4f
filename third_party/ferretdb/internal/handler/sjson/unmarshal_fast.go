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
)

// This file decodes the sjson Marshal writes in one pass over its bytes. encoding/json decoded
// a document into a map of raw messages, its schema into maps of structs, then every value
// again with a decoder of its own: a read of a stored document cost more than its write.
//
// The fast path accepts only the exact shape Marshal writes (no whitespace, `$s` first, fields
// in the order of `$k`, the properties of a schema in the same order, known schema fields once
// each) and the types svc stores (no binData, no regex). On anything else it gives up, and
// Unmarshal decodes the bytes with encoding/json as before, so the result, or the error, stays
// what it was. Where it accepts, it decodes each value with the same strconv calls encoding/json
// makes, and leaves strings with escapes or non-ASCII bytes to encoding/json itself.
// FuzzUnmarshalFast checks both decode the same.

// fastMaxDepth bounds the nesting the fast path recurses into; deeper input goes to encoding/json.
const fastMaxDepth = 200

// fastSchema is the schema of a document: its keys in order and the schema of each.
type fastSchema struct {
	keys  []string
	elems []*fastElem
}

// fastElem is the schema of one value.
type fastElem struct {
	t      elemType
	schema *fastSchema // for objects
	items  []*fastElem // for arrays
}

// fastParser is a position in the bytes being decoded.
type fastParser struct {
	b     []byte
	i     int
	depth int
}

// unmarshalFast decodes data if it has the shape Marshal writes; ok is false otherwise.
func unmarshalFast(data []byte) (*types.Document, bool) {
	const prefix = `{"$s":`

	if len(data) < len(prefix) || string(data[:len(prefix)]) != prefix {
		return nil, false
	}

	p := fastParser{b: data, i: len(prefix)}

	sch, ok := p.schema()
	if !ok {
		return nil, false
	}

	for _, k := range sch.keys {
		if k == "$s" {
			return nil, false
		}
	}

	d := types.MakeDocument(len(sch.keys))

	for n, k := range sch.keys {
		if !p.byte(',') {
			return nil, false
		}

		if !p.key(k) {
			return nil, false
		}

		v, ok := p.value(sch.elems[n])
		if !ok {
			return nil, false
		}

		d.Set(k, v)
	}

	if !p.byte('}') || p.i != len(p.b) {
		return nil, false
	}

	return d, true
}

// byte consumes c if it is next.
func (p *fastParser) byte(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}

	return false
}

// peek reports whether c is next, without consuming it.
func (p *fastParser) peek(c byte) bool {
	return p.i < len(p.b) && p.b[p.i] == c
}

// literal consumes s if it is next.
func (p *fastParser) literal(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}

	return false
}

// string consumes a JSON string and returns its value.
func (p *fastParser) string() (string, bool) {
	if !p.peek('"') {
		return "", false
	}

	start := p.i
	simple := true

	j := p.i + 1
	for ; j < len(p.b); j++ {
		c := p.b[j]

		if c == '"' {
			break
		}

		switch {
		case c == '\\':
			simple = false
			j++
		case c < 0x20:
			return "", false
		case c >= 0x80:
			simple = false
		}
	}

	if j >= len(p.b) {
		return "", false
	}

	p.i = j + 1

	if simple {
		return string(p.b[start+1 : j]), true
	}

	// escapes and non-ASCII (invalid UTF-8 becomes U+FFFD): decode exactly as encoding/json does
	var s string
	if err := json.Unmarshal(p.b[start:p.i], &s); err != nil {
		return "", false
	}

	return s, true
}

// propKey is a key of a schema's properties: the bytes between its quotes if they are plain
// ASCII, the decoded string otherwise.
type propKey struct {
	raw     []byte
	decoded string
	plain   bool
}

// is reports whether the key is k.
func (pk propKey) is(k string) bool {
	if pk.plain {
		return string(pk.raw) == k
	}

	return pk.decoded == k
}

// propKey consumes a key of a schema's properties, without a string for a plain one.
func (p *fastParser) propKey() (propKey, bool) {
	if p.peek('"') {
		for j := p.i + 1; j < len(p.b); j++ {
			c := p.b[j]

			if c == '"' {
				raw := p.b[p.i+1 : j]
				p.i = j + 1

				return propKey{raw: raw, plain: true}, true
			}

			if c < 0x20 || c > 0x7e || c == '\\' {
				break
			}
		}
	}

	s, ok := p.string()

	return propKey{decoded: s}, ok
}

// key consumes the object key k and the colon after it.
func (p *fastParser) key(k string) bool {
	// a key of plain ASCII is compared with the bytes, without decoding them into a string
	if plainASCII(k) {
		if len(p.b)-p.i >= len(k)+3 && p.b[p.i] == '"' && string(p.b[p.i+1:p.i+1+len(k)]) == k &&
			p.b[p.i+1+len(k)] == '"' && p.b[p.i+2+len(k)] == ':' {
			p.i += len(k) + 3
			return true
		}
	}

	s, ok := p.string()

	return ok && s == k && p.byte(':')
}

// plainASCII reports whether JSON writes s between its quotes as it is: printable ASCII
// but for '"' and '\\'.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}

	return true
}

// number consumes a JSON number and returns its literal.
func (p *fastParser) number() (string, bool) {
	b := p.b
	start := p.i
	j := p.i

	if j < len(b) && b[j] == '-' {
		j++
	}

	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && b[j] >= '1' && b[j] <= '9':
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
	default:
		return "", false
	}

	if j < len(b) && b[j] == '.' {
		j++
		d := j

		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}

		if j == d {
			return "", false
		}
	}

	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++

		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}

		d := j

		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}

		if j == d {
			return "", false
		}
	}

	p.i = j

	return string(b[start:j]), true
}

// enter counts one more level of nesting; it is false beyond fastMaxDepth.
func (p *fastParser) enter() bool {
	p.depth++
	return p.depth <= fastMaxDepth
}

// schema consumes a document's schema: `{}` or `{"p":{...},"$k":[...]}`.
func (p *fastParser) schema() (*fastSchema, bool) {
	if !p.enter() {
		return nil, false
	}
	defer func() { p.depth-- }()

	if !p.byte('{') {
		return nil, false
	}

	sch := new(fastSchema)

	if p.byte('}') {
		return sch, true
	}

	var propKeys []propKey

	var seenP, seenK bool

	for {
		f, ok := p.string()
		if !ok || !p.byte(':') {
			return nil, false
		}

		switch f {
		case "p":
			if seenP || !p.byte('{') {
				return nil, false
			}

			seenP = true

			for !p.byte('}') {
				if len(propKeys) > 0 && !p.byte(',') {
					return nil, false
				}

				k, ok := p.propKey()
				if !ok || !p.byte(':') {
					return nil, false
				}

				e, ok := p.elem()
				if !ok {
					return nil, false
				}

				propKeys = append(propKeys, k)
				sch.elems = append(sch.elems, e)
			}

		case "$k":
			if seenK || !p.byte('[') {
				return nil, false
			}

			seenK = true

			for !p.byte(']') {
				if len(sch.keys) > 0 && !p.byte(',') {
					return nil, false
				}

				k, ok := p.string()
				if !ok {
					return nil, false
				}

				sch.keys = append(sch.keys, k)
			}

		default:
			return nil, false
		}

		if p.byte('}') {
			break
		}

		if !p.byte(',') {
			return nil, false
		}
	}

	// the properties must be those of $k, in its order, each once
	if len(propKeys) != len(sch.keys) {
		return nil, false
	}

	for n, k := range sch.keys {
		if !propKeys[n].is(k) {
			return nil, false
		}
	}

	if !uniqueKeys(sch.keys) {
		return nil, false
	}

	return sch, true
}

// uniqueKeys reports whether no key repeats.
func uniqueKeys(keys []string) bool {
	if len(keys) <= 16 {
		for n := 1; n < len(keys); n++ {
			for m := 0; m < n; m++ {
				if keys[m] == keys[n] {
					return false
				}
			}
		}

		return true
	}

	seen := make(map[string]struct{}, len(keys))

	for _, k := range keys {
		if _, ok := seen[k]; ok {
			return false
		}

		seen[k] = struct{}{}
	}

	return true
}

// elem consumes the schema of one value: `{"t":"<type>"}`, with `"$s"` for an object and
// `"i"` for an array.
func (p *fastParser) elem() (*fastElem, bool) {
	if !p.enter() {
		return nil, false
	}
	defer func() { p.depth-- }()

	if !p.byte('{') {
		return nil, false
	}

	e := new(fastElem)

	var seenT, seenS, seenI bool

	for {
		f, ok := p.string()
		if !ok || !p.byte(':') {
			return nil, false
		}

		switch f {
		case "t":
			t, ok := p.string()
			if seenT || !ok {
				return nil, false
			}

			seenT = true

			switch elemType(t) {
			case elemTypeObject, elemTypeArray, elemTypeDouble, elemTypeString, elemTypeObjectID,
				elemTypeBool, elemTypeDate, elemTypeNull, elemTypeInt, elemTypeTimestamp, elemTypeLong:
				e.t = elemType(t)
			default:
				return nil, false
			}

		case "$s":
			if seenS {
				return nil, false
			}

			seenS = true

			if e.schema, ok = p.schema(); !ok {
				return nil, false
			}

		case "i":
			if seenI || !p.byte('[') {
				return nil, false
			}

			seenI = true
			e.items = []*fastElem{}

			for !p.byte(']') {
				if len(e.items) > 0 && !p.byte(',') {
					return nil, false
				}

				item, ok := p.elem()
				if !ok {
					return nil, false
				}

				e.items = append(e.items, item)
			}

		default:
			return nil, false
		}

		if p.byte('}') {
			break
		}

		if !p.byte(',') {
			return nil, false
		}
	}

	// an object has its schema, an array its items, and nothing else has either
	if !seenT || seenS != (e.t == elemTypeObject) || seenI != (e.t == elemTypeArray) {
		return nil, false
	}

	return e, true
}

// value consumes one value of the given schema.
func (p *fastParser) value(e *fastElem) (any, bool) {
	// null is null whatever the schema says, as in unmarshalSingleValue
	if p.literal("null") {
		return types.Null, true
	}

	switch e.t {
	case elemTypeObject:
		return p.document(e.schema)

	case elemTypeArray:
		return p.array(e.items)

	case elemTypeDouble:
		s, ok := p.number()
		if !ok {
			return nil, false
		}

		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, false
		}

		return f, true

	case elemTypeString:
		return p.string()

	case elemTypeObjectID:
		var id types.ObjectID

		const l = 2 * len(id)

		if len(p.b)-p.i < l+2 || p.b[p.i] != '"' || p.b[p.i+l+1] != '"' {
			return nil, false
		}

		if _, err := hex.Decode(id[:], p.b[p.i+1:p.i+l+1]); err != nil {
			return nil, false
		}

		p.i += l + 2

		return id, true

	case elemTypeBool:
		if p.literal("true") {
			return true, true
		}

		if p.literal("false") {
			return false, true
		}

		return nil, false

	case elemTypeDate:
		s, ok := p.number()
		if !ok {
			return nil, false
		}

		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, false
		}

		return time.UnixMilli(ms), true

	case elemTypeInt:
		s, ok := p.number()
		if !ok {
			return nil, false
		}

		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return nil, false
		}

		return int32(n), true

	case elemTypeTimestamp:
		s, ok := p.number()
		if !ok {
			return nil, false
		}

		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, false
		}

		return types.Timestamp(n), true

	case elemTypeLong:
		s, ok := p.number()
		if !ok {
			return nil, false
		}

		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, false
		}

		return n, true
	}

	// elemTypeNull with a value that is not null
	return nil, false
}

// document consumes an embedded document of the given schema.
func (p *fastParser) document(sch *fastSchema) (*types.Document, bool) {
	if !p.enter() {
		return nil, false
	}
	defer func() { p.depth-- }()

	if !p.byte('{') {
		return nil, false
	}

	// an empty object is an empty document whatever its schema, as in documentType
	if p.byte('}') {
		return new(types.Document), true
	}

	if len(sch.keys) == 0 {
		return nil, false
	}

	d := types.MakeDocument(len(sch.keys))

	for n, k := range sch.keys {
		if n > 0 && !p.byte(',') {
			return nil, false
		}

		if !p.key(k) {
			return nil, false
		}

		v, ok := p.value(sch.elems[n])
		if !ok {
			return nil, false
		}

		d.Set(k, v)
	}

	if !p.byte('}') {
		return nil, false
	}

	return d, true
}

// array consumes an array whose values have the given schemas.
func (p *fastParser) array(items []*fastElem) (*types.Array, bool) {
	if !p.enter() {
		return nil, false
	}
	defer func() { p.depth-- }()

	if !p.byte('[') {
		return nil, false
	}

	a := types.MakeArray(len(items))

	for n, item := range items {
		if n > 0 && !p.byte(',') {
			return nil, false
		}

		v, ok := p.value(item)
		if !ok {
			return nil, false
		}

		a.Append(v)
	}

	if !p.byte(']') {
		return nil, false
	}

	return a, true
}
