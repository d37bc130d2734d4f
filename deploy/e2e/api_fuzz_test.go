package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// fuzzSeed fixes every request the API fuzz sends, so that a failure names a case that is sent
// again, byte for byte, by the next run.
const fuzzSeed = 20261127

// fuzzCase is one request of the API fuzz: class names what kind of abuse it is, for the tally
// and for the failure message.
type fuzzCase struct {
	class   string
	method  string
	path    string
	keyName string
	body    []byte // nil: no body
	ctype   string // Content-Type when body is not nil ("" means application/json)
}

// TestFuzzEveryOperation walks every operation of /openapi.json and every MCP tool of tools/list
// with malformed and hostile requests (seeded, so a failure reproduces), with no key, the owner
// key, a sub-key of each scope, a stranger's key and a made-up key. No answer may be a 5xx but a
// 503 with Retry-After that a limit answers (UNAVAILABLE or RATE_LIMITED), and every 4xx is in
// the spec's error shape with the request's id, and every status is one openapi.json documents
// for the operation. The tally of requests per class and of answers per status is logged.
func TestFuzzEveryOperation(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, owner := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Fuzz target\n"})
	stranger, strangerKey := env.CreateObject(t, nil)
	// rotate-key is aimed at a third object, so that no case ends the keys the others use.
	victim, _ := env.CreateObject(t, nil)
	keys := map[string]string{"none": "", "owner": owner, "stranger": strangerKey,
		"made-up": "svc_sk_" + strings.Repeat("Z", 40), "garbage": "not a key ~!@#$%^&*()"}
	for _, scope := range []string{"read", "write", "mailbox"} {
		sub := env.Do(t, "POST", "/api/objects/"+hash+"/keys", owner, map[string]any{"scopes": []string{scope}}).Expect(t, 201).JSON(t)
		keys["sub-"+scope] = Str(t, sub, "key")
	}
	thread := Str(t, env.Do(t, "POST", "/api/messages", owner, map[string]any{"from_hash": hash, "to_hash": stranger, "kind": "note", "body": "hello"}).Expect(t, 201).JSON(t), "thread_id")
	keyNames := slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	})

	rng := rand.New(rand.NewPCG(fuzzSeed, 1))
	g := &fuzzGen{rng: rng, doc: env.spec.Doc, hash: hash, stranger: stranger, victim: victim, thread: thread, keyNames: keyNames}
	var cases []fuzzCase
	paths := env.spec.Doc["paths"].(map[string]any)
	for _, tpl := range slices.Sorted(mapKeys(paths)) {
		ops := paths[tpl].(map[string]any)
		for _, method := range slices.Sorted(mapKeys(ops)) {
			op, ok := ops[method].(map[string]any)
			if !ok {
				continue
			}
			cases = append(cases, g.operation(tpl, strings.ToUpper(method), op)...)
		}
	}
	tools := mcpTools(t, env, owner)
	for _, name := range slices.Sorted(mapKeys(tools)) {
		cases = append(cases, g.tool(name, tools[name])...)
	}
	cases = append(cases, g.mcpEnvelopes()...)

	tally := map[string]int{}
	for _, c := range cases {
		tally[c.class]++
	}
	if len(cases) < 5000 {
		t.Fatalf("the fuzz built %d requests, want at least 5000", len(cases))
	}

	client := &http.Client{Timeout: 60 * time.Second}
	var mu sync.Mutex
	var failures []string
	statuses := map[int]int{}
	count := func(status int) {
		mu.Lock()
		statuses[status]++
		mu.Unlock()
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if msg := sendFuzzCase(client, env.spec, env.URL, keys, cases[i], count); msg != "" {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("case %d [%s] %s %s as %s: %s", i, cases[i].class, cases[i].method, clip(cases[i].path, 200), cases[i].keyName, msg))
					mu.Unlock()
				}
			}
		}()
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()

	classes := slices.Sorted(mapKeys(tally))
	var summary strings.Builder
	for _, c := range classes {
		fmt.Fprintf(&summary, "%s=%d ", c, tally[c])
	}
	t.Logf("fuzz sent %d requests (seed %d): %s", len(cases), fuzzSeed, summary.String())
	t.Logf("answers by status: %v", statuses)
	sort.Strings(failures)
	for i, f := range failures {
		if i == 200 {
			t.Errorf("… and %d more", len(failures)-200)
			break
		}
		t.Error(f)
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// sendFuzzCase sends c and returns what is wrong with its answer, or "".
func sendFuzzCase(client *http.Client, spec *Spec, base string, keys map[string]string, c fuzzCase, statuses func(int)) string {
	var body io.Reader
	if c.body != nil {
		body = bytes.NewReader(c.body)
	}
	req, err := http.NewRequest(c.method, base+c.path, body)
	if err != nil {
		return "" // a path Go itself will not send is no request of the suite's
	}
	if c.body != nil {
		ct := c.ctype
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	if strings.HasPrefix(c.path, "/mcp") {
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	if k := keys[c.keyName]; k != "" {
		req.Header.Set("Authorization", "Bearer "+k)
	}
	res, err := client.Do(req)
	if err != nil {
		return fmt.Sprintf("no answer: %v", err)
	}
	defer res.Body.Close()
	statuses(res.StatusCode)
	// Every status of a documented operation is one openapi.json lists for it (a limit's 503 is
	// checked below); /mcp is not an operation of the document.
	if tpl, op := spec.Operation(c.method, c.path); op != nil && !strings.HasPrefix(c.path, "/mcp") && res.StatusCode != http.StatusServiceUnavailable {
		if _, ok := op["responses"].(map[string]any)[fmt.Sprint(res.StatusCode)]; !ok {
			return fmt.Sprintf("answered %d, which openapi.json does not document for %s", res.StatusCode, tpl)
		}
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		return "" // an open stream: its status is the answer, and 200 is fine
	}
	raw, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if err != nil {
		return fmt.Sprintf("read the answer: %v", err)
	}
	if documentedPage(spec, c.method, c.path, res) {
		return "" // a page route's documented HTML answer (a browser's "no such box" page)
	}
	if msg := checkFuzzAnswer(res.StatusCode, res.Header, raw); msg != "" {
		return msg
	}
	if strings.HasPrefix(c.path, "/mcp") && res.StatusCode == 200 {
		return checkToolAnswer(raw)
	}
	return ""
}

// documentedPage reports whether an answer is one the operation documents as a non-JSON page.
func documentedPage(spec *Spec, method, path string, res *http.Response) bool {
	_, op := spec.Operation(method, path)
	if op == nil {
		return false
	}
	resp, _ := op["responses"].(map[string]any)[fmt.Sprint(res.StatusCode)].(map[string]any)
	content, _ := resp["content"].(map[string]any)
	ct := res.Header.Get("Content-Type")
	for mediaType := range content {
		if !strings.Contains(mediaType, "json") && strings.HasPrefix(ct, strings.Split(mediaType, ";")[0]) {
			return true
		}
	}
	return false
}

// checkFuzzAnswer checks one HTTP answer: no 5xx but a limit's 503 with Retry-After, and every
// 4xx and 5xx in the error shape carrying the request's id.
func checkFuzzAnswer(status int, h http.Header, raw []byte) string {
	if status < 400 {
		return ""
	}
	if status == http.StatusNotModified {
		return ""
	}
	var body struct {
		Error *struct {
			Code      string `json:"code"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.Error == nil || body.Error.Code == "" || body.Error.Message == "" {
		return fmt.Sprintf("answered %d not in the error shape: %s", status, clip(string(raw), 300))
	}
	if body.Error.RequestID == "" || body.Error.RequestID != h.Get("X-Request-Id") {
		return fmt.Sprintf("answered %d with request_id %q, X-Request-Id %q", status, body.Error.RequestID, h.Get("X-Request-Id"))
	}
	if status >= 500 {
		if status == http.StatusServiceUnavailable && h.Get("Retry-After") != "" && (body.Error.Code == "UNAVAILABLE" || body.Error.Code == "RATE_LIMITED") {
			return ""
		}
		return fmt.Sprintf("answered %d: %s", status, clip(string(raw), 300))
	}
	return ""
}

// checkToolAnswer checks a JSON-RPC answer of /mcp: a tool's refusal carries the route's status
// and error, which may not be a 5xx either.
func checkToolAnswer(raw []byte) string {
	var rpc struct {
		Result *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &rpc); err != nil {
		return fmt.Sprintf("/mcp answered 200 with no JSON-RPC answer: %s", clip(string(raw), 300))
	}
	if rpc.Error != nil && rpc.Error.Code == -32603 {
		return fmt.Sprintf("/mcp answered an internal error: %s", clip(string(raw), 300))
	}
	if rpc.Result == nil || !rpc.Result.IsError {
		return ""
	}
	var text strings.Builder
	for _, c := range rpc.Result.Content {
		text.WriteString(c.Text)
	}
	var refusal struct {
		Status int `json:"status"`
		Error  struct {
			Code, Message string
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(text.String()), &refusal); err != nil || refusal.Error.Code == "" {
		return "" // a refusal of the MCP layer itself (arguments that fail the tool's schema)
	}
	if refusal.Status >= 500 && !(refusal.Status == 503 && (refusal.Error.Code == "UNAVAILABLE" || refusal.Error.Code == "RATE_LIMITED")) {
		return fmt.Sprintf("a tool's route answered %d: %s", refusal.Status, clip(text.String(), 300))
	}
	return ""
}

// mcpTools lists the MCP tools the owner key sees, with their input schemas.
func mcpTools(t testing.TB, env *Env, key string) map[string]map[string]any {
	t.Helper()
	resp := env.send(t, Request{Method: "POST", Path: "/mcp", Key: key,
		Body:    `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
		Headers: map[string]string{"Accept": "application/json, text/event-stream"}}).Expect(t, 200)
	var out struct {
		Result struct {
			Tools []struct {
				Name        string         `json:"name"`
				InputSchema map[string]any `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	resp.Decode(t, &out)
	if len(out.Result.Tools) == 0 {
		t.Fatalf("tools/list listed no tool: %s", resp.Body)
	}
	tools := map[string]map[string]any{}
	for _, tool := range out.Result.Tools {
		tools[tool.Name] = tool.InputSchema
	}
	return tools
}

// fuzzGen builds the cases, drawing every choice from one seeded source.
type fuzzGen struct {
	rng                            *rand.Rand
	doc                            map[string]any
	hash, stranger, victim, thread string
	keyNames                       []string
}

// oddSegments are path parameter values a careless or hostile client sends.
var oddSegments = []string{"%00", "..", "%2e%2e", "a%2Fb", "%ff%fe", "%C5%BF", "%24where", "%7B%7D", "null", "-1", "0",
	"%20", "'%20OR%201=1", "svc_sk_x", "a.b", "~", "%E2%80%AE", "%F0%9F%92%A9", "9223372036854775808", "%5B%5D", "x%3Fy%3D1", "%23"}

// oddQuery are query values out of every documented range.
var oddQuery = []string{"-1", "0", "1e30", "99999999999999999999", "abc", "", "%ff", "NaN", "1.5", "-0", "true", "%00", "[]", "%7B%7D", "2147483648"}

// hostileValues replace one field's value: each wrong type, nested nulls, huge numbers, bad text.
var hostileValues = []string{`null`, `true`, `0`, `-1`, `1.5`, `1e400`, `-1e400`, `123456789012345678901234567890`, `-9223372036854775809`,
	`""`, `"x"`, `[]`, `[null]`, `[[[[null]]]]`, `{}`, `{"a":null}`, `{"$gt":""}`, `[{"a":[null,{}]}]`, `"\u0000"`, `"\ud800"`,
	"\"\xff\xfe\"", `"` + strings.Repeat("x", 70000) + `"`, `[` + strings.Repeat(`"x",`, 3000) + `"x"]`}

// malformedBodies are bodies no schema accepts.
var malformedBodies = []string{"", "{", "}", "[", `{"a":}`, `{"a":1,}`, "nul", "\xff\xfe\xfd", `"just a string"`, `42`, `null`, `[]`, `[{}]`,
	`{"a":1}{"b":2}`, strings.Repeat("[", 5000) + strings.Repeat("]", 5000), strings.Repeat(`{"a":`, 3000) + "1" + strings.Repeat("}", 3000),
	`{"a":"\x00"}`, "\ufeff{}", `{"__proto__":{"x":1}}`}

func (g *fuzzGen) key() string {
	// Half the cases go with the owner key, so that most of them reach the handlers.
	if g.rng.IntN(2) == 0 {
		return "owner"
	}
	return g.keyNames[g.rng.IntN(len(g.keyNames))]
}

// fill turns a path template into a path: {hash} is the fuzzed object (the victim on rotate-key),
// {threadId} its thread, any other parameter a made-up id.
func (g *fuzzGen) fill(tpl string, odd string) string {
	path := tpl
	for strings.Contains(path, "{") {
		i, j := strings.Index(path, "{"), strings.Index(path, "}")
		name := path[i+1 : j]
		v := "x_unknown"
		switch {
		case odd != "" && g.rng.IntN(2) == 0:
			v = odd
		case name == "hash" && strings.HasSuffix(tpl, "/rotate-key"):
			v = g.victim
		case name == "hash" || name == "box":
			v = []string{g.hash, g.hash, g.stranger}[g.rng.IntN(3)]
		case name == "threadId":
			v = g.thread
		}
		path = path[:i] + v + path[j+1:]
	}
	if odd != "" && !strings.Contains(path, odd) && strings.Contains(tpl, "{") {
		// Make sure the odd value lands in one parameter at least.
		i, j := strings.LastIndex(tpl, "{"), strings.LastIndex(tpl, "}")
		path = g.fill(tpl[:i], "") + odd + g.fill(tpl[j+1:], "")
	}
	return path
}

// resolve follows a local $ref of the document.
func (g *fuzzGen) resolve(s map[string]any) map[string]any {
	for s != nil {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		s = g.at(ref)
	}
	return s
}

func (g *fuzzGen) at(ref string) map[string]any {
	var cur any = g.doc
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	m, _ := cur.(map[string]any)
	return m
}

// sample builds a plausible value of schema s, so that one wrong field is the only fault.
func (g *fuzzGen) sample(s map[string]any, depth int) any {
	s = g.resolve(s)
	if s == nil || depth > 4 {
		return "x"
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return enum[g.rng.IntN(len(enum))]
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			alt, _ := alts[0].(map[string]any)
			return g.sample(alt, depth+1)
		}
	}
	typ, _ := s["type"].(string)
	if types, ok := s["type"].([]any); ok && len(types) > 0 {
		typ, _ = types[0].(string)
	}
	switch typ {
	case "string":
		switch s["format"] {
		case "uri":
			// A loopback address the outbound guard refuses before dialling: the fuzz sends
			// nothing off this machine, not even a DNS query.
			return "https://127.0.0.1:1/x"
		case "date-time":
			return "2026-01-01T00:00:00Z"
		}
		if strings.Contains(fmt.Sprint(s["pattern"]), "svc") {
			return g.stranger
		}
		return "x"
	case "integer", "number":
		return 1
	case "boolean":
		return true
	case "array":
		items, _ := s["items"].(map[string]any)
		return []any{g.sample(items, depth+1)}
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for _, name := range slices.Sorted(mapKeys(props)) {
			p, _ := props[name].(map[string]any)
			out[name] = g.sample(p, depth+1)
		}
		return out
	}
	return "x"
}

// bodies builds the body cases of one schema: each field with each hostile value, unknown fields,
// an array in the object's place, malformed and oversized bodies.
func (g *fuzzGen) bodies(schema map[string]any, emit func(class string, body []byte, ctype string)) {
	schema = g.resolve(schema)
	base, _ := g.sample(schema, 0).(map[string]any)
	if base == nil {
		base = map[string]any{}
	}
	raw := func(v any) []byte {
		b, _ := json.Marshal(v)
		return b
	}
	emit("valid-ish", raw(base), "")
	for _, name := range slices.Sorted(mapKeys(base)) {
		// Each field gets a few hostile values drawn from the list, plus a wrong type for sure.
		picks := []string{`{"a":[null]}`}
		for range 6 {
			picks = append(picks, hostileValues[g.rng.IntN(len(hostileValues))])
		}
		for _, v := range picks {
			b := withField(raw(base), name, v)
			emit(classOf(v), b, "")
		}
	}
	for range 4 {
		v := hostileValues[g.rng.IntN(len(hostileValues))]
		emit("unknown-field", withField(raw(base), "zz_unknown_"+fmt.Sprint(g.rng.IntN(1000)), v), "")
	}
	emit("array-for-object", []byte("["+string(raw(base))+"]"), "")
	for range 6 {
		emit("malformed", []byte(malformedBodies[g.rng.IntN(len(malformedBodies))]), "")
	}
	emit("bad-utf8", bytes.ReplaceAll(raw(base), []byte(`"x"`), []byte("\"\xc3\x28\xa0\xa1\"")), "")
	emit("oversized", append(append([]byte(`{"pad":"`), bytes.Repeat([]byte("a"), 1<<20+100)...), '"', '}'), "")
	emit("wrong-content-type", raw(base), []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=latin1"}[g.rng.IntN(4)])
}

// withField sets field name of a JSON object body to the raw JSON value v.
func withField(obj []byte, name, v string) []byte {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(obj, &m)
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	m[name] = json.RawMessage("0") // a placeholder, replaced in the text below: v may be invalid JSON
	b, _ := json.Marshal(m)
	key, _ := json.Marshal(name)
	return bytes.Replace(b, append(key, []byte(":0")...), append(append(key, ':'), v...), 1)
}

// classOf names the class of a hostile field value.
func classOf(v string) string {
	switch {
	case strings.Contains(v, "null") && v != "null":
		return "nested-null"
	case strings.ContainsAny(v, "0123456789") && !strings.Contains(v, `"`):
		return "huge-or-odd-number"
	case strings.Contains(v, "\xff") || strings.Contains(v, `\ud800`) || strings.Contains(v, `\u0000`):
		return "bad-utf8"
	case len(v) > 1000:
		return "oversized-field"
	case strings.HasPrefix(v, "["):
		return "wrong-type-array"
	case strings.HasPrefix(v, "{"):
		return "wrong-type-object"
	}
	return "wrong-type"
}

// operation builds the cases of one REST operation.
func (g *fuzzGen) operation(tpl, method string, op map[string]any) []fuzzCase {
	var out []fuzzCase
	add := func(class, path, key string, body []byte, ctype string) {
		out = append(out, fuzzCase{class: class, method: method, path: path, keyName: key, body: body, ctype: ctype})
	}
	// Every key on the plain call.
	for _, k := range g.keyNames {
		add("keys", g.fill(tpl, ""), k, nil, "")
	}
	// Odd path parameters.
	if strings.Contains(tpl, "{") {
		for range 20 {
			add("odd-path-param", g.fill(tpl, oddSegments[g.rng.IntN(len(oddSegments))]), g.key(), nil, "")
		}
		add("odd-path-param", g.fill(tpl, strings.Repeat("a", 4000)), g.key(), nil, "")
	}
	// Query parameters out of range, and unknown ones.
	var query []string
	params, _ := op["parameters"].([]any)
	for _, p := range params {
		pm := g.resolve(p.(map[string]any))
		if pm["in"] == "query" {
			query = append(query, pm["name"].(string))
		}
	}
	for _, q := range query {
		for range 4 {
			v := oddQuery[g.rng.IntN(len(oddQuery))]
			add("query-out-of-range", g.fill(tpl, "")+"?"+url.QueryEscape(q)+"="+v, g.key(), nil, "")
		}
		add("query-out-of-range", g.fill(tpl, "")+"?"+q+"=1&"+q+"=2", g.key(), nil, "")
		add("query-out-of-range", g.fill(tpl, "")+"?"+q+"="+strings.Repeat("9", 3000), g.key(), nil, "")
	}
	add("query-out-of-range", g.fill(tpl, "")+"?zz_unknown=%ff&limit=-5&cursor=%00", g.key(), nil, "")
	// Bodies, by the request schema, or hostile bodies where none is documented.
	var schema map[string]any
	if rb, ok := op["requestBody"].(map[string]any); ok {
		rb = g.resolve(rb)
		content, _ := rb["content"].(map[string]any)
		for _, m := range content {
			schema, _ = m.(map[string]any)["schema"].(map[string]any)
		}
	}
	if schema != nil {
		g.bodies(schema, func(class string, body []byte, ctype string) {
			if class == "valid-ish" {
				for _, k := range g.keyNames {
					add("keys", g.fill(tpl, ""), k, body, ctype)
				}
				return
			}
			add(class, g.fill(tpl, ""), g.key(), body, ctype)
		})
	} else if method != "GET" {
		for range 3 {
			add("malformed", g.fill(tpl, ""), g.key(), []byte(malformedBodies[g.rng.IntN(len(malformedBodies))]), "")
		}
	}
	return out
}

// tool builds the cases of one MCP tool: its arguments fuzzed as a body is.
func (g *fuzzGen) tool(name string, schema map[string]any) []fuzzCase {
	var out []fuzzCase
	call := func(args []byte) []byte {
		return []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":` + string(mustRaw(name)) + `,"arguments":` + string(args) + `}}`)
	}
	// The tool's schema names {hash} and friends as arguments: aim them at the fuzzed object.
	sample, _ := g.sample(schema, 0).(map[string]any)
	for _, k := range []string{"hash", "box"} {
		if _, ok := sample[k]; ok {
			sample[k] = g.hash
		}
	}
	if _, ok := sample["thread_id"]; ok {
		sample["thread_id"] = g.thread
	}
	for _, k := range g.keyNames {
		out = append(out, fuzzCase{class: "mcp-keys", method: "POST", path: "/mcp", keyName: k, body: call(mustRaw(sample))})
	}
	g.bodies(map[string]any{"type": "object", "properties": schema["properties"]}, func(class string, body []byte, ctype string) {
		if ctype != "" || class == "oversized" || class == "array-for-object" || class == "malformed" {
			out = append(out, fuzzCase{class: "mcp-" + class, method: "POST", path: "/mcp", keyName: g.key(), body: body, ctype: ctype})
			return
		}
		// Keep the aimed-at identifiers where the case did not replace them.
		var args map[string]json.RawMessage
		if json.Unmarshal(body, &args) == nil {
			for k, v := range sample {
				if s, ok := v.(string); ok && (k == "hash" || k == "thread_id") && string(args[k]) == `"x"` {
					args[k] = mustRaw(s)
				}
			}
			body, _ = json.Marshal(args)
		}
		out = append(out, fuzzCase{class: "mcp-" + class, method: "POST", path: "/mcp", keyName: g.key(), body: call(body)})
	})
	for _, odd := range []string{"%00", "..", strings.Repeat("a", 4000), "\u202e", "-1"} {
		args := map[string]any{}
		for k, v := range sample {
			args[k] = v
		}
		for _, k := range []string{"hash", "thread_id", "id", "source_id", "subscription_id", "key_id", "claim_id"} {
			if _, ok := args[k]; ok {
				args[k] = odd
			}
		}
		out = append(out, fuzzCase{class: "mcp-odd-path-param", method: "POST", path: "/mcp", keyName: g.key(), body: call(mustRaw(args))})
	}
	return out
}

// mcpEnvelopes are JSON-RPC envelopes gone wrong at /mcp.
func (g *fuzzGen) mcpEnvelopes() []fuzzCase {
	envelopes := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":[]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":42}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{"zz":[null]}}}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":{},"method":"tools/list"}`,
		`{"jsonrpc":"1.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"no/such"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\"}}",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":[],"capabilities":null}}`,
	}
	var out []fuzzCase
	for _, e := range envelopes {
		for _, k := range []string{"owner", "none", "sub-read"} {
			out = append(out, fuzzCase{class: "mcp-envelope", method: "POST", path: "/mcp", keyName: k, body: []byte(e)})
		}
	}
	for range 10 {
		out = append(out, fuzzCase{class: "mcp-envelope", method: "POST", path: "/mcp", keyName: g.key(), body: []byte(malformedBodies[g.rng.IntN(len(malformedBodies))])})
	}
	for _, m := range []string{"GET", "DELETE", "PUT"} {
		out = append(out, fuzzCase{class: "mcp-envelope", method: m, path: "/mcp", keyName: "owner"})
	}
	return out
}

func mustRaw(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
