package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Spec is the gateway's OpenAPI document, used to check every answer the tests receive.
type Spec struct {
	Doc      map[string]any
	compiler *jsonschema.Compiler
	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
	paths    []specPath
}

type specPath struct {
	template string
	re       *regexp.Regexp
	literals int
}

const specURL = "mem://openapi.json"

func loadSpec(t testing.TB, e *Env) *Spec {
	t.Helper()
	resp := e.send(t, Request{Method: "GET", Path: "/openapi.json"}).Expect(t, http.StatusOK)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(resp.Body))
	if err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(specURL, doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	s := &Spec{Doc: doc.(map[string]any), compiler: c, compiled: map[string]*jsonschema.Schema{}}
	for tpl := range s.Doc["paths"].(map[string]any) {
		pattern := regexp.QuoteMeta(tpl)
		literals := strings.Count(tpl, "/") - strings.Count(tpl, "{")
		pattern = regexp.MustCompile(`\\\{[A-Za-z_]+\\\}`).ReplaceAllString(pattern, `[^/]+`)
		s.paths = append(s.paths, specPath{template: tpl, re: regexp.MustCompile("^" + pattern + "$"), literals: literals})
	}
	return s
}

// Operation finds the documented operation of a request, or nil.
func (s *Spec) Operation(method, path string) (string, map[string]any) {
	path, _, _ = strings.Cut(path, "?")
	best, bestLiterals := "", -1
	var bestOp map[string]any
	for _, p := range s.paths {
		if p.re.MatchString(path) && p.literals > bestLiterals {
			if op, ok := s.Doc["paths"].(map[string]any)[p.template].(map[string]any)[strings.ToLower(method)].(map[string]any); ok {
				best, bestLiterals, bestOp = p.template, p.literals, op
			}
		}
	}
	return best, bestOp
}

// Check fails the test when an answer of a documented route has an undocumented status, media
// type or body shape. Answers of undocumented routes must be 404 or 405 in the error shape.
func (s *Spec) Check(t testing.TB, r *Response) {
	t.Helper()
	if r.Header.Get("X-Request-Id") == "" || len(r.Header.Values("X-Request-Id")) != 1 {
		t.Fatalf("%s %s: answer %d must carry exactly one X-Request-Id, got %q", r.method, r.path, r.Status, r.Header.Values("X-Request-Id"))
	}
	tpl, op := s.Operation(r.method, r.path)
	if op == nil {
		if r.Status != http.StatusNotFound && r.Status != http.StatusMethodNotAllowed {
			t.Fatalf("%s %s is not in openapi.json but answered %d", r.method, r.path, r.Status)
		}
		r.ErrorCode(t)
		return
	}
	resp, ok := op["responses"].(map[string]any)[strconv.Itoa(r.Status)].(map[string]any)
	if !ok {
		t.Fatalf("%s %s (%s) answered %d, which openapi.json does not document; body: %s", r.method, r.path, tpl, r.Status, r.Body)
	}
	content, _ := resp["content"].(map[string]any)
	if len(content) == 0 {
		return
	}
	ct := r.Header.Get("Content-Type")
	for mediaType, m := range content {
		if !strings.HasPrefix(ct, strings.Split(mediaType, ";")[0]) {
			continue
		}
		if !strings.Contains(mediaType, "json") {
			return
		}
		ref, _ := m.(map[string]any)["schema"].(map[string]any)["$ref"].(string)
		s.validate(t, r, ref)
		return
	}
	t.Fatalf("%s %s answered %d with Content-Type %q; openapi.json documents %v", r.method, r.path, r.Status, ct, slices.Collect(maps.Keys(content)))
}

func (s *Spec) validate(t testing.TB, r *Response, ref string) {
	t.Helper()
	if ref == "" {
		return
	}
	s.mu.Lock()
	sch, ok := s.compiled[ref]
	if !ok {
		var err error
		sch, err = s.compiler.Compile(specURL + ref)
		if err != nil {
			s.mu.Unlock()
			t.Fatalf("compile %s: %v", ref, err)
		}
		s.compiled[ref] = sch
	}
	s.mu.Unlock()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatalf("%s %s: body is not JSON: %s", r.method, r.path, r.Body)
	}
	if err := sch.Validate(v); err != nil {
		t.Fatalf("%s %s: answer %d does not match %s in openapi.json: %v\nbody: %s", r.method, r.path, r.Status, ref, err, r.Body)
	}
}

// MustJSON renders v for failure messages.
func MustJSON(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(raw)
}
