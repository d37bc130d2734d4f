package httpx

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeBytes(t *testing.T) {
	t.Parallel()
	type nested struct {
		Mode string `json:"mode"`
	}
	type target struct {
		Name   *string  `json:"name"`
		Count  int      `json:"count"`
		Tags   []string `json:"tags"`
		Nested *nested  `json:"nested"`
	}
	cases := []struct {
		body, code, mention string
	}{
		{`{"name":"a","count":2,"tags":["x"],"nested":{"mode":"m"}}`, "", ""},
		{``, CodeInvalidJSON, ""},
		{`   `, CodeInvalidJSON, ""},
		{`{`, CodeInvalidJSON, ""},
		{`{"name":"a"`, CodeInvalidJSON, ""},
		{`[]`, CodeInvalidJSON, "object"},
		{`"text"`, CodeInvalidJSON, "object"},
		{`{} {}`, CodeInvalidJSON, "exactly one"},
		{`{}x`, CodeInvalidJSON, ""},
		{`{"nope":1}`, CodeUnknownField, `"nope"`},
		{`{"nested":{"nope":1}}`, CodeUnknownField, `"nope"`},
		{`{"count":"two"}`, CodeInvalidRequest, `"count" must be an integer`},
		{`{"count":1.5}`, CodeInvalidRequest, `"count"`},
		{`{"tags":"x"}`, CodeInvalidRequest, `"tags" must be an array`},
		{`{"name":7}`, CodeInvalidRequest, `"name" must be a string`},
		{`{"nested":{"mode":1}}`, CodeInvalidRequest, `"nested.mode"`},
		{`{"Name":"a"}`, CodeUnknownField, `"Name"`},
		{`{"name":"a","NAME":"b"}`, CodeUnknownField, `"NAME"`},
		{`{"nested":{"Mode":"m"}}`, CodeUnknownField, `"Mode"`},
		{`{"coun\u0074":2}`, "", ""},
	}
	for _, c := range cases {
		var v target
		err := DecodeBytes([]byte(c.body), &v)
		if c.code == "" {
			if err != nil {
				t.Errorf("%s: unexpected error %v", c.body, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != c.code || e.Status != 400 {
			t.Errorf("%s: got %v, want 400 %s", c.body, err, c.code)
			continue
		}
		if c.mention != "" && !strings.Contains(e.Message, c.mention) {
			t.Errorf("%s: message %q does not mention %s", c.body, e.Message, c.mention)
		}
	}
}

func TestDecodeRequiredFields(t *testing.T) {
	t.Parallel()
	type inner struct {
		ID   *string `json:"id" required:"true"`
		Role *string `json:"role" required:"true"`
	}
	type target struct {
		Title   *string  `json:"title" required:"true"`
		IDs     []string `json:"source_ids,omitempty" required:"true"`
		Note    *string  `json:"note"`
		Message *inner   `json:"message"`
		Plain   inner    `json:"plain"`
	}
	cases := []struct{ body, missing string }{
		{`{"title":"","source_ids":[],"plain":{"id":"","role":""}}`, ""},
		{`{"title":"","source_ids":[],"message":{"id":"a","role":"r"},"plain":{"id":"","role":""}}`, ""},
		{`{"title":"","source_ids":[],"message":{"role":"r"},"plain":{"id":"","role":""}}`, `"message.id"`},
		{`{"title":"","source_ids":[],"message":{"id":"a","role":null},"plain":{"id":"","role":""}}`, `"message.role"`},
		{`{"title":"","source_ids":[]}`, `"plain.id"`},
		{`{"source_ids":["a"],"plain":{"id":"","role":""}}`, `"title"`},
		{`{"title":null,"source_ids":["a"],"plain":{"id":"","role":""}}`, `"title"`},
		{`{"title":"t","plain":{"id":"","role":""}}`, `"source_ids"`},
	}
	for _, c := range cases {
		var v target
		err := DecodeBytes([]byte(c.body), &v)
		if c.missing == "" {
			if err != nil {
				t.Errorf("%s: unexpected error %v", c.body, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeMissingField || !strings.Contains(e.Message, c.missing) {
			t.Errorf("%s: got %v, want MISSING_FIELD naming %s", c.body, err, c.missing)
		}
	}
}

func TestDecodeRefusesNUL(t *testing.T) {
	t.Parallel()
	type target struct {
		Body *string `json:"body"`
	}
	for body, refused := range map[string]bool{
		`{"body":"a\u0000b"}`:   true,
		`{"body":"\\\u0000"}`:   true,
		`{"body":"a\\u0000b"}`:  false, // the text \u0000, not a NUL
		`{"body":"plain text"}`: false,
	} {
		var v target
		err := DecodeBytes([]byte(body), &v)
		if got := err != nil; got != refused {
			t.Errorf("%s: refused %v (%v), want %v", body, got, err, refused)
		}
	}
	for path, refused := range map[string]bool{"/api/claims/\x00": true, "/api/claims/\x7f": true, "/api/claims/\xff": true, "/api/claims/clm_1": false} {
		if got := CheckPath(path) != nil; got != refused {
			t.Errorf("path %q: refused %v, want %v", path, got, refused)
		}
	}
}
