package routes

// Schema is a JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1), built with the helpers
// below.
type Schema = map[string]any

// Str is a string schema.
func Str() Schema { return Schema{"type": "string"} }

// StrMax is a string of at most n characters.
func StrMax(n int) Schema { return Schema{"type": "string", "maxLength": n} }

// Enum is a string from values.
func Enum(values ...string) Schema { return Schema{"type": "string", "enum": values} }

// DateTime is an ISO 8601 UTC timestamp with milliseconds.
func DateTime() Schema {
	return Schema{"type": "string", "format": "date-time", "pattern": `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`}
}

// Int is an integer schema.
func Int() Schema { return Schema{"type": "integer"} }

// Bool is a boolean schema.
func Bool() Schema { return Schema{"type": "boolean"} }

// Arr is an array of items.
func Arr(items Schema) Schema { return Schema{"type": "array", "items": items} }

// Ref refers to a named schema.
func Ref(name string) Schema { return Schema{"$ref": "#/components/schemas/" + name} }

// Nullable allows null besides s.
func Nullable(s Schema) Schema { return Schema{"anyOf": []any{s, Schema{"type": "null"}}} }

// Obj is an object with the given properties, of which required must be present. Responses are
// closed (no other properties) so that the document stays true to what is served.
func Obj(props map[string]Schema, required ...string) Schema {
	p := map[string]any{}
	for k, v := range props {
		p[k] = v
	}
	s := Schema{"type": "object", "properties": p, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// CommonSchemas are shared by every service.
var CommonSchemas = map[string]Schema{
	"Error": Obj(map[string]Schema{
		"error": Obj(map[string]Schema{
			"code": Str(), "message": Str(), "request_id": Str(),
		}, "code", "message"),
	}, "error"),
	"Ok":    Obj(map[string]Schema{"ok": Bool()}, "ok"),
	"Rules": Nullable(Ref("RulesObject")),
	"RulesObject": Obj(map[string]Schema{
		"read":                  Obj(map[string]Schema{"llm_txt": Str(), "dumps": Str(), "mailbox_meta": Str()}),
		"write":                 Obj(map[string]Schema{"mailbox": Str(), "llm_txt": Str(), "dumps": Str()}),
		"respond":               Obj(map[string]Schema{"mode": Str(), "policy": Str()}),
		"participant_admission": Obj(map[string]Schema{"mode": Str()}),
	}),
	"Text": Str(),
}

// Paging are the query parameters of every cursor-paged list.
var Paging = []Param{
	{Name: "limit", Schema: Schema{"type": "integer", "minimum": 1, "maximum": 200}, Description: "page size (default 50)"},
	{Name: "cursor", Schema: Str(), Description: "next_cursor of the previous page"},
}
