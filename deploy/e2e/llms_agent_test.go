package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// manual is /llms.txt, read the way an agent reads it: by its headings, its route lines
// ("POST <url> [marks]: summary") and the indented lines under them ("body: a* string, …",
// "201: hash* string, …").
type manual struct {
	text     string
	sections map[string]string // heading (without #s) → its text up to the next heading
}

func readManual(t *testing.T, env *Env) *manual {
	t.Helper()
	res := env.send(t, Request{Method: "GET", Path: "/llms.txt"}).Expect(t, http.StatusOK)
	m := &manual{text: string(res.Body), sections: map[string]string{}}
	heading := ""
	for _, line := range strings.Split(m.text, "\n") {
		if strings.HasPrefix(line, "#") {
			heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
			continue
		}
		m.sections[heading] += line + "\n"
	}
	return m
}

// numbered is a step's number before its title.
var numbered = regexp.MustCompile(`^\d+\. `)

// section is the text under the heading title (a step's number left out).
func (m *manual) section(t *testing.T, title string) string {
	t.Helper()
	for h, text := range m.sections {
		if numbered.ReplaceAllString(h, "") == title {
			return text
		}
	}
	t.Fatalf("/llms.txt has no section %q:\n%s", title, m.text)
	return ""
}

// manualRoute is one route as the manual gives it.
type manualRoute struct {
	method, url string
	body        map[string]string // field → type; required fields are listed in required
	required    []string
	status      int
	answer      []string
}

// route finds, in a section, the route of method whose URL ends with suffix.
func (m *manual) route(t *testing.T, section, method, suffix string) manualRoute {
	t.Helper()
	lines := strings.Split(m.section(t, section), "\n")
	for i, line := range lines {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != method || !strings.HasSuffix(f[1], suffix) {
			continue
		}
		r := manualRoute{method: method, url: f[1], body: map[string]string{}}
		for _, sub := range lines[i+1:] {
			if !strings.HasPrefix(sub, "  ") {
				break
			}
			name, list, _ := strings.Cut(strings.TrimSpace(sub), ": ")
			fields := parseFields(list)
			switch {
			case name == "body":
				for _, fl := range fields {
					r.body[fl.name] = fl.typ
					if fl.required {
						r.required = append(r.required, fl.name)
					}
				}
			case len(name) == 3 && name[0] == '2':
				r.status, _ = strconv.Atoi(name)
				for _, fl := range fields {
					r.answer = append(r.answer, fl.name)
				}
			}
		}
		return r
	}
	t.Fatalf("/llms.txt section %q names no %s …%s", section, method, suffix)
	return manualRoute{}
}

type field struct {
	name, typ string
	required  bool
}

// parseFields reads "a* string, b x|y" (the alternatives of a oneOf are not split further).
func parseFields(list string) []field {
	var out []field
	for _, part := range strings.Split(list, ", ") {
		name, typ, _ := strings.Cut(strings.TrimSpace(part), " ")
		out = append(out, field{name: strings.TrimSuffix(name, "*"), typ: typ, required: strings.HasSuffix(name, "*")})
	}
	return out
}

// agent calls the API only as the manual says.
type agent struct {
	env            *Env
	header, scheme string
}

func (a agent) call(t *testing.T, r manualRoute, key string, params map[string]string, body map[string]any) map[string]any {
	t.Helper()
	url := r.url
	for name, v := range params {
		url = strings.ReplaceAll(url, "{"+name+"}", v)
	}
	if !strings.HasPrefix(url, a.env.URL) {
		t.Fatalf("the manual's URL %s is not on the gateway %s", url, a.env.URL)
	}
	for name := range body {
		if _, ok := r.body[name]; !ok {
			t.Fatalf("%s %s: the manual lists no body field %q (fields %v)", r.method, r.url, name, r.body)
		}
	}
	for _, name := range r.required {
		if _, ok := body[name]; !ok {
			t.Fatalf("%s %s: the manual requires %q, which this agent does not know how to fill", r.method, r.url, name)
		}
	}
	req := Request{Method: r.method, Path: strings.TrimPrefix(url, a.env.URL), Headers: map[string]string{}}
	if body != nil {
		req.Body = body
	}
	if key != "" {
		req.Headers[a.header] = a.scheme + " " + key
	}
	res := a.env.Send(t, req)
	want := r.status
	if want == 0 {
		t.Fatalf("%s %s: the manual says no success status", r.method, r.url)
	}
	return res.Expect(t, want).JSON(t)
}

// expectAnswer fails unless the manual lists name among the route's answer fields.
func (r manualRoute) expectAnswer(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		if !slices.Contains(r.answer, name) {
			t.Fatalf("%s %s: the manual lists no answer field %q (fields %v)", r.method, r.url, name, r.answer)
		}
	}
}

// firstOf is the first value of an a|b|c type.
func firstOf(t *testing.T, typ string) string {
	t.Helper()
	v, _, _ := strings.Cut(typ, "|")
	if v == "" || strings.HasPrefix(v, "string") {
		t.Fatalf("type %q lists no values", typ)
	}
	return v
}

// TestAgentLoopFromLLMsTxt: an agent that knows nothing but /llms.txt creates two objects,
// sends, replies in the thread, reads and marks read, records a decision and guidance, and
// verifies a webhook delivery's signature, each step with the routes, fields and rules the
// manual gives. A step the manual stops describing fails the test.
func TestAgentLoopFromLLMsTxt(t *testing.T) {
	rcv := newReceiver(t)
	env := webhookEnv(t, rcv)
	m := readManual(t, env)

	// Authenticate: the header and scheme, read from the manual.
	hdr := regexp.MustCompile(`(?m)^\s+([A-Za-z-]+): (\S+) <api_key>$`).FindStringSubmatch(m.section(t, "Authenticate"))
	if hdr == nil {
		t.Fatalf("/llms.txt does not say how to send the key:\n%s", m.section(t, "Authenticate"))
	}
	a := agent{env: env, header: hdr[1], scheme: hdr[2]}

	// Create two objects.
	create := m.route(t, "Create an object", "POST", "/api/objects")
	create.expectAnswer(t, "hash", "api_key")
	var hashes, keys [2]string
	for i, name := range []string{"Agent Ada", "Agent Bob"} {
		out := a.call(t, create, "", nil, map[string]any{"initial_llm_txt": "# " + name + "\n"})
		hashes[i], keys[i] = Str(t, out, "hash"), Str(t, out, "api_key")
	}
	ada, bob := 0, 1

	// Send, then reply in the thread.
	send := m.route(t, "Send a message", "POST", "/api/messages")
	send.expectAnswer(t, "thread_id")
	if _, ok := send.body["thread_id"]; !ok || !strings.Contains(m.section(t, "Send a message"), "Reply in a thread") {
		t.Fatalf("/llms.txt does not say how to reply in a thread:\n%s", m.section(t, "Send a message"))
	}
	kind := firstOf(t, send.body["kind"])
	first := a.call(t, send, "", nil, map[string]any{"from_hash": hashes[ada], "to_hash": hashes[bob], "kind": kind, "body": "Shall we ship on Friday?"})
	thread := Str(t, first, "thread_id")
	a.call(t, send, "", nil, map[string]any{"from_hash": hashes[bob], "to_hash": hashes[ada], "kind": kind, "body": "Yes, Friday.", "thread_id": thread})

	// Read and mark read: the mailbox shows the unread reply; reading the thread marks it read.
	readSec := m.section(t, "Read and mark read")
	for _, word := range []string{"unread_count", "read_at"} {
		if !strings.Contains(readSec, word) {
			t.Fatalf("/llms.txt does not say how reading marks read (%s):\n%s", word, readSec)
		}
	}
	mailbox := m.route(t, "Read and mark read", "GET", "/mailbox")
	mailbox.expectAnswer(t, "threads")
	unread := func() float64 {
		for _, th := range a.call(t, mailbox, keys[ada], map[string]string{"hash": hashes[ada]}, nil)["threads"].([]any) {
			if th := th.(map[string]any); th["id"] == thread {
				return th["unread_count"].(float64)
			}
		}
		return -1 // not in the mailbox yet
	}
	// A send is listed when its 201 returns, as the manual says.
	if !strings.Contains(readSec, "listed when its 201 returns") {
		t.Fatalf("/llms.txt does not say that a send is listed when its 201 returns:\n%s", readSec)
	}
	if n := unread(); n != 1 {
		t.Fatalf("unread_count right after the reply = %v, want 1", n)
	}
	read := m.route(t, "Read and mark read", "GET", "/api/threads/{threadId}")
	read.expectAnswer(t, "messages")
	msgs := a.call(t, read, keys[ada], map[string]string{"threadId": thread}, nil)["messages"].([]any)
	if len(msgs) != 2 || msgs[1].(map[string]any)["body"] != "Yes, Friday." {
		t.Fatalf("the thread holds %v", msgs)
	}
	if n := unread(); n != 0 {
		t.Errorf("unread_count after reading = %v, want 0", n)
	}
	again := a.call(t, read, keys[ada], map[string]string{"threadId": thread}, nil)["messages"].([]any)
	if again[1].(map[string]any)["read_at"] == nil {
		t.Errorf("the reply has no read_at after it was read: %v", again[1])
	}

	// Record a decision and guidance.
	decision := m.route(t, "Graph and decisions", "POST", "/decision")
	node := a.call(t, decision, keys[ada], map[string]string{"threadId": thread}, map[string]any{"title": "Ship on Friday", "body": "Both agreed.", "confidence": 0.9})
	if node["type"] != "decision" {
		t.Errorf("the decision answered %v", node)
	}
	graph := m.route(t, "Graph and decisions", "GET", "/graph")
	graph.expectAnswer(t, "nodes")
	found := false
	for _, n := range a.call(t, graph, keys[bob], map[string]string{"threadId": thread}, nil)["nodes"].([]any) {
		found = found || n.(map[string]any)["id"] == node["id"]
	}
	if !found {
		t.Error("the other side's graph lacks the decision")
	}
	guidance := m.route(t, "Guidance", "PUT", "/private-guidance")
	a.call(t, guidance, keys[ada], map[string]string{"threadId": thread}, map[string]any{"body": "Do not promise a date after Friday."})

	// Events: a webhook on Ada's messages; a delivery is verified as the manual says.
	hook := m.route(t, "Events", "POST", "/webhooks")
	hook.expectAnswer(t, "secret")
	if !strings.Contains(hook.body["events"], "message") {
		t.Fatalf("the manual's webhook events %q lack message", hook.body["events"])
	}
	if !strings.Contains(m.section(t, "Events"), "- message: ") {
		t.Fatal("/llms.txt does not describe the message event")
	}
	secret := Str(t, a.call(t, hook, keys[ada], map[string]string{"hash": hashes[ada]},
		map[string]any{"callback_url": rcv.URL("/hook"), "events": []string{"message"}}), "secret")
	a.call(t, send, "", nil, map[string]any{"from_hash": hashes[bob], "to_hash": hashes[ada], "kind": kind, "body": "See you Friday.", "thread_id": thread})
	got := rcv.waitFor(t, env, 1)[0]
	verifyAsTheManualSays(t, m.section(t, "Verify a webhook delivery (Standard Webhooks)"), secret, got)
	if got.Payload.Type != "message" || got.Payload.Data["thread_id"] != thread {
		t.Errorf("the delivery is %s %v", got.Payload.Type, got.Payload.Data)
	}
}

// verifyAsTheManualSays checks a delivery's signature with the recipe the manual gives: the
// secret's prefix, the headers joined into the signed content, and the version prefix.
func verifyAsTheManualSays(t *testing.T, recipe, secret string, got received) {
	t.Helper()
	prefix := regexp.MustCompile(`after "([a-z]+_)"`).FindStringSubmatch(recipe)
	signed := regexp.MustCompile(`signed = ([a-z-]+) \+ "(.)" \+ ([a-z-]+) \+ "(.)" \+ raw body`).FindStringSubmatch(recipe)
	expected := regexp.MustCompile(`expected = "([^"]+)" \+ base64\(HMAC-SHA256\(key, signed\)\)`).FindStringSubmatch(recipe)
	sigHeader := regexp.MustCompile(`(?m)^\s+([a-z-]+): space-separated entries`).FindStringSubmatch(recipe)
	if prefix == nil || signed == nil || expected == nil || sigHeader == nil {
		t.Fatalf("/llms.txt does not say how to verify a delivery:\n%s", recipe)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, prefix[1]))
	if err != nil {
		t.Fatalf("the secret %q after %q is not base64: %v", secret[:8]+"…", prefix[1], err)
	}
	content := got.Header.Get(signed[1]) + signed[2] + got.Header.Get(signed[3]) + signed[4] + string(got.Body)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(content))
	want := expected[1] + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	entries := strings.Fields(got.Header.Get(sigHeader[1]))
	if !slices.ContainsFunc(entries, func(e string) bool { return hmac.Equal([]byte(e), []byte(want)) }) {
		t.Errorf("no entry of %s %v matches the signature computed as /llms.txt says", sigHeader[1], entries)
	}
	if got.Header.Get(signed[1]) == "" || got.Header.Get(signed[3]) == "" {
		t.Errorf("the delivery lacks the headers %s and %s", signed[1], signed[3])
	}
}
