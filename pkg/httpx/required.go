package httpx

import (
	"reflect"
	"strings"
)

// checkRequired returns MISSING_FIELD for the first top-level field of the struct dst points to
// that is tagged `required:"true"` and was absent or null in the body. Required fields are
// pointers, slices or maps, so that absence and a zero value can be told apart.
func checkRequired(dst any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	v = v.Elem()
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Tag.Get("required") != "true" {
			continue
		}
		switch fv := v.Field(i); fv.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			if fv.IsNil() {
				return MissingField(jsonName(f))
			}
		}
	}
	return nil
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" || name == "-" {
		return f.Name
	}
	return name
}
