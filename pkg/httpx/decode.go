package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/pkg/apierr"
)

// Body size limits of DESIGN §4 (declared in apierr, beside the error they cause).
const (
	MaxBodyBytes = apierr.MaxBodyBytes
	MaxTextBytes = apierr.MaxTextBytes
)

// Decode reads the request body as one JSON object into dst, refusing unknown fields, wrong types,
// trailing data and bodies larger than MaxBodyBytes, each with a 4xx in the error shape. Fields of
// dst tagged `required:"true"` (pointers, slices or maps) must be present: MISSING_FIELD otherwise.
func Decode(c *gin.Context, dst any) error {
	raw, err := ReadBody(c, MaxBodyBytes)
	if err != nil {
		return err
	}
	return DecodeBytes(raw, dst)
}

// ReadBody reads the request body whole, refusing one larger than limit (413), and puts it back,
// so that a handler that needs the bytes themselves (a signature's digest) can still decode it.
func ReadBody(c *gin.Context, limit int64) ([]byte, error) {
	if c.Request.ContentLength > limit {
		return nil, TooLarge(limit)
	}
	raw, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, TooLarge(limit)
		}
		return nil, BadRequest(CodeInvalidJSON, "could not read the request body")
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(raw))
	return raw, nil
}

// DecodeBytes applies Decode's rules to an already read body.
func DecodeBytes(raw []byte, dst any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return BadRequest(CodeInvalidJSON, "a JSON object body is required")
	}
	if holdsNUL(raw) {
		return BadRequest(CodeInvalidJSON, "a string holds a NUL character (\\u0000), which svc does not store")
	}
	if key := caseVariant(raw, reflect.TypeOf(dst)); key != "" {
		return BadRequest(CodeUnknownField, "unknown field %q: field names are case-sensitive", key)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	// Anything after the object, a value or a stray delimiter, is a token or an error, not EOF.
	if _, err := dec.Token(); err != io.EOF {
		return BadRequest(CodeInvalidJSON, "the body must hold exactly one JSON object")
	}
	return checkRequired(dst)
}

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// caseVariant returns a key of raw that differs from a field of t only by case, searching nested
// objects and arrays too, or "" when there is none. encoding/json would match such a key to the
// field, so a body could name one field twice ("to_hash" and "To_Hash") and every reader that
// looks keys up exactly (the gateway's rate limits) would see another value than the service.
// Bodies that are not valid JSON are left to the decoder to refuse.
func caseVariant(raw []byte, t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || reflect.PointerTo(t).Implements(unmarshaler) {
		return ""
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return ""
		}
		fields := jsonFields(t, map[string]reflect.Type{})
		for key, v := range obj {
			if ft, ok := fields[key]; ok {
				if bad := caseVariant(v, ft); bad != "" {
					return bad
				}
				continue
			}
			for name := range fields {
				if strings.EqualFold(name, key) {
					return key
				}
			}
		}
	case reflect.Slice, reflect.Array:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) == nil {
			for _, v := range items {
				if bad := caseVariant(v, t.Elem()); bad != "" {
					return bad
				}
			}
		}
	case reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) == nil {
			for _, v := range obj {
				if bad := caseVariant(v, t.Elem()); bad != "" {
					return bad
				}
			}
		}
	}
	return ""
}

// jsonFields adds the JSON names of t's fields to out, those of embedded structs included.
func jsonFields(t reflect.Type, out map[string]reflect.Type) map[string]reflect.Type {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-" || (!f.IsExported() && !f.Anonymous):
		case f.Anonymous && tag == "" && indirect(f.Type).Kind() == reflect.Struct:
			jsonFields(indirect(f.Type), out)
		case tag != "":
			out[tag] = f.Type
		default:
			out[f.Name] = f.Type
		}
	}
	return out
}

func indirect(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

func decodeError(err error) *Error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return BadRequest(CodeInvalidJSON, "the body is not valid JSON")
	case errors.As(err, &typ):
		if typ.Field == "" {
			return BadRequest(CodeInvalidJSON, "the body must be a JSON object")
		}
		return BadRequest(CodeInvalidRequest, "field %q must be %s", typ.Field, jsonKind(typ.Type.Kind().String()))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return BadRequest(CodeUnknownField, "unknown field %s", name)
	default:
		var e *Error
		if errors.As(err, &e) { // returned by a custom UnmarshalJSON
			return e
		}
		return BadRequest(CodeInvalidJSON, "the body could not be decoded: %s", sanitize(err.Error()))
	}
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	case "float32", "float64":
		return "a number"
	default:
		if strings.HasPrefix(goKind, "int") || strings.HasPrefix(goKind, "uint") {
			return "an integer"
		}
		return fmt.Sprintf("of type %s", goKind)
	}
}

// sanitize keeps a decoder message short and free of Go type names.
func sanitize(s string) string {
	s = strings.TrimPrefix(s, "json: ")
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

// holdsNUL reports whether a JSON text escapes a NUL character in a string (an escaped backslash
// followed by "u0000" is text, not a NUL). No field takes one, and PostgreSQL refuses to store it.
func holdsNUL(raw []byte) bool {
	for i := 0; ; {
		j := bytes.Index(raw[i:], []byte(`\u0000`))
		if j < 0 {
			return false
		}
		j += i
		backslashes := 0
		for k := j - 1; k >= 0 && raw[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return true
		}
		i = j + 1
	}
}
