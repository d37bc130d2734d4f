package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// hiddenExceptions are the routes that reach a private object on purpose, with the reason.
var hiddenExceptions = map[string]string{
	"POST /api/objects/{hash}/a2a/message:send": "message ingress accepts a message to a private object (docs/api.md)",
}

// TestPrivateObjectIsUnknownOnEveryRoute walks every route of /openapi.json that names an object
// in its path and asks it about a private object as an anonymous caller and as another object's
// key, and every public route also as the object's own sub-key without read: each answer is the
// one the same request gets for an object that does not exist (status, error code and message; the
// request id aside), a 404 NOT_FOUND in the spec's error shape wherever the route reaches the
// object. The object's owner key and its read sub-key are shown the object by every public read.
func TestPrivateObjectIsUnknownOnEveryRoute(t *testing.T) {
	t.Parallel()
	env := Start(t)
	private, ownerKey := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Hidden Box\n", "visibility": "private"})
	enableFeed(t, env, private, ownerKey)
	publish(t, env, private, ownerKey, "a note of the hidden box")
	_, strangerKey := env.CreateObject(t, nil)
	subKey := func(scopes ...string) string {
		return Str(t, env.Do(t, "POST", "/api/objects/"+private+"/keys", ownerKey, map[string]any{"scopes": scopes}).Expect(t, 201).JSON(t), "key")
	}
	writeOnly, readOnly := subKey("write", "mailbox"), subKey("read")
	const unknown = "svc_nosuchobject0000"

	// A write names a valid body, so that what is checked is the object, not the request.
	bodies := map[string]any{
		"POST /api/feeds/{hash}/items":                   map[string]any{"title": "t", "body": "b", "tags": []string{}},
		"POST /api/objects/{hash}/context-subscriptions": map[string]any{"callback_url": "https://example.com/hook"},
	}
	paths := env.spec.Doc["paths"].(map[string]any)
	var checked, public int
	for _, tpl := range slices.Sorted(mapKeys(paths)) {
		if !strings.Contains(tpl, "{hash}") && tpl != "/{box}" {
			continue
		}
		for _, method := range slices.Sorted(mapKeys(paths[tpl].(map[string]any))) {
			op, ok := paths[tpl].(map[string]any)[method].(map[string]any)
			route := strings.ToUpper(method) + " " + tpl
			if !ok || hiddenExceptions[route] != "" {
				continue
			}
			callers := map[string]string{"anonymous": "", "another object's key": strangerKey}
			isPublic := anonymousAllowed(op)
			if isPublic {
				callers["its sub-key without read"] = writeOnly
				public++
			}
			for who, key := range callers {
				hidden := env.send(t, Request{Method: strings.ToUpper(method), Path: objectPath(tpl, private), Key: key, Body: bodies[route]})
				absent := env.send(t, Request{Method: strings.ToUpper(method), Path: objectPath(tpl, unknown), Key: key, Body: bodies[route]})
				if hidden.Status != absent.Status || !bytes.Equal(withoutRequestID(t, hidden), withoutRequestID(t, absent)) {
					t.Errorf("%s as %s: a private object answers %d %s, an unknown one %d %s", route, who,
						hidden.Status, hidden.Body, absent.Status, absent.Body)
				}
				if isPublic && hidden.Status != http.StatusNotFound {
					t.Errorf("%s as %s: a private object answers %d, want 404", route, who, hidden.Status)
				}
				if hidden.Status == http.StatusNotFound && tpl != "/{box}" {
					env.spec.Check(t, hidden)
					hidden.ExpectError(t, http.StatusNotFound, "NOT_FOUND")
				}
				checked++
			}
			if isPublic && method == "get" {
				for _, key := range []string{ownerKey, readOnly} {
					env.Do(t, "GET", objectPath(tpl, private), key, nil).Expect(t, http.StatusOK)
				}
			}
		}
	}
	// The routes that must be covered, so that a renamed route cannot drop out of the walk.
	if public < 8 || checked < 100 {
		t.Fatalf("walked %d public routes and %d requests, want the whole table", public, checked)
	}
	// A claim, whose body names the object, hides it the same way.
	claim := func(hash string) *Response {
		return env.Do(t, "POST", "/api/claims", strangerKey, map[string]any{"object_hash": hash, "proof_type": "domain", "claimed_target": "example.com"})
	}
	hidden, absent := claim(private), claim(unknown)
	hidden.ExpectError(t, http.StatusNotFound, "NOT_FOUND")
	if !bytes.Equal(withoutRequestID(t, hidden), withoutRequestID(t, absent)) {
		t.Errorf("a claim naming a private object answers %s, one naming an unknown object %s", hidden.Body, absent.Body)
	}
}

// anonymousAllowed reports whether an operation of openapi.json takes no key.
func anonymousAllowed(op map[string]any) bool {
	sec, _ := op["security"].([]any)
	for _, s := range sec {
		if m, ok := s.(map[string]any); ok && len(m) == 0 {
			return true
		}
	}
	return false
}

// objectPath fills a path template with hash for {hash} or {box} and a made-up id for the rest.
func objectPath(tpl, hash string) string {
	p := strings.NewReplacer("{hash}", hash, "{box}", hash).Replace(tpl)
	for strings.Contains(p, "{") {
		i, j := strings.Index(p, "{"), strings.Index(p, "}")
		p = p[:i] + "x_made_up_1" + p[j+1:]
	}
	return p
}

// withoutRequestID is an answer's body with its request id left out (it differs per request).
func withoutRequestID(t *testing.T, r *Response) []byte {
	t.Helper()
	var m map[string]map[string]any
	if json.Unmarshal(r.Body, &m) != nil || m["error"] == nil {
		return r.Body
	}
	delete(m["error"], "request_id")
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
