package httpx

import (
	"reflect"
	"strings"
)

// checkRequired returns MISSING_FIELD for the first field of the struct dst points to that is
// tagged `required:"true"` and was absent or null in the body, at any depth: a nested object that
// is present has its own required fields checked, named by their dotted path
// ("message.messageId"). Required fields are pointers, slices or maps, so that absence and a zero
// value can be told apart.
func checkRequired(dst any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	return requiredIn(v.Elem(), "")
}

func requiredIn(v reflect.Value, prefix string) error {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		name := prefix + jsonName(f)
		switch fv.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			if fv.IsNil() {
				if f.Tag.Get("required") == "true" {
					return MissingField(name)
				}
				continue
			}
		}
		if inner := structOf(fv); inner.IsValid() {
			if err := requiredIn(inner, name+"."); err != nil {
				return err
			}
		}
	}
	return nil
}

// structOf is the struct fv holds directly or through a pointer; the zero Value otherwise.
func structOf(fv reflect.Value) reflect.Value {
	if fv.Kind() == reflect.Pointer && !fv.IsNil() {
		fv = fv.Elem()
	}
	if fv.Kind() == reflect.Struct {
		return fv
	}
	return reflect.Value{}
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" || name == "-" {
		return f.Name
	}
	return name
}
