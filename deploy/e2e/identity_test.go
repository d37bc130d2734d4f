package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/service"
)

func TestCreateObject(t *testing.T) {
	t.Parallel()
	env := Start(t)
	resp := env.Do(t, "POST", "/api/objects", "", map[string]any{
		"initial_llm_txt": "# Ada\nA test object.", "visibility": "public",
		"rules": map[string]any{"write": map[string]any{"mailbox": "anyone"}},
	}).Expect(t, http.StatusCreated)
	obj := resp.JSON(t)
	hash, key := Str(t, obj, "hash"), Str(t, obj, "api_key")
	if !strings.HasPrefix(hash, "svc_") || !apikey.ValidHash(hash) {
		t.Errorf("hash %q is not an svc_ hash", hash)
	}
	if !strings.HasPrefix(key, "svc_sk_") || !apikey.Valid(key) {
		t.Errorf("api_key %q is not a valid svc_sk_ key", key)
	}
	if Str(t, obj, "mailbox_status") != "unclaimed" {
		t.Errorf("mailbox_status = %v, want unclaimed", obj["mailbox_status"])
	}
	created := Str(t, obj, "created_at")
	if ts, err := time.Parse("2006-01-02T15:04:05.000Z", created); err != nil || time.Since(ts) > time.Minute {
		t.Errorf("created_at %q is not a recent millisecond UTC timestamp", created)
	}

	got := env.Do(t, "GET", "/api/objects/"+hash, "", nil).Expect(t, http.StatusOK).JSON(t)
	if Str(t, got, "hash") != hash || Num(t, got, "version") != 1 || Str(t, got, "created_at") != created {
		t.Errorf("object read %v does not match the created object", got)
	}
	if _, leaked := got["api_key"]; leaked {
		t.Error("the public object read returns the api_key")
	}
	env.Do(t, "GET", "/api/objects/svc_nosuchobject", "", nil).ExpectError(t, 404, "NOT_FOUND")
}

func TestErrorShape(t *testing.T) {
	t.Parallel()
	env := Start(t)
	big := strings.Repeat("a", 256<<10+1)
	cases := []struct {
		name, method, path, body string
		status                   int
		code, mention            string
	}{
		{"unknown route", "GET", "/api/nope", "", 404, "NOT_FOUND", ""},
		{"unknown method", "DELETE", "/api/objects", "", 405, "METHOD_NOT_ALLOWED", ""},
		{"malformed JSON", "POST", "/api/objects", `{"visibility":`, 400, "INVALID_JSON", ""},
		{"not an object", "POST", "/api/objects", `[1,2]`, 400, "INVALID_JSON", ""},
		{"empty body", "POST", "/api/objects", ``, 400, "INVALID_JSON", ""},
		{"trailing data", "POST", "/api/objects", `{} {}`, 400, "INVALID_JSON", ""},
		{"unknown field", "POST", "/api/objects", `{"colour":"red"}`, 400, "UNKNOWN_FIELD", "colour"},
		{"wrong type", "POST", "/api/objects", `{"visibility":3}`, 400, "INVALID_REQUEST", "visibility"},
		{"bad visibility", "POST", "/api/objects", `{"visibility":"secret"}`, 400, "INVALID_VISIBILITY", ""},
		{"bad rules section", "POST", "/api/objects", `{"rules":{"nope":{}}}`, 400, "INVALID_REQUEST", "rules"},
		{"bad rules leaf", "POST", "/api/objects", `{"rules":{"read":{"llm_txt":5}}}`, 400, "INVALID_REQUEST", "rules"},
		{"llm.txt too large", "POST", "/api/objects", `{"initial_llm_txt":"` + big + `"}`, 413, "PAYLOAD_TOO_LARGE", ""},
		{"body too large", "POST", "/api/objects", `{"initial_llm_txt":"` + strings.Repeat("a", 1<<20) + `"}`, 413, "PAYLOAD_TOO_LARGE", ""},
		{"bad directory limit", "GET", "/api/directory?limit=0", "", 400, "INVALID_REQUEST", "limit"},
		{"bad directory cursor", "GET", "/api/directory?cursor=!!!", "", 400, "INVALID_REQUEST", "cursor"},
		{"malformed query string", "GET", "/api/directory?cursor=%zz", "", 400, "INVALID_REQUEST", "query"},
		{"bad directory status", "GET", "/api/directory?status=gold", "", 400, "INVALID_REQUEST", "status"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body any
			if c.body != "" || c.method == "POST" {
				body = c.body
			}
			resp := env.Do(t, c.method, c.path, "", body)
			resp.ExpectError(t, c.status, c.code)
			if c.mention != "" && !strings.Contains(string(resp.Body), c.mention) {
				t.Errorf("error %s does not name %q", resp.Body, c.mention)
			}
		})
	}
	// A malformed client request id is replaced, a well-formed one is kept.
	resp := env.Send(t, Request{Method: "GET", Path: "/api/nope", Headers: map[string]string{"X-Request-Id": "client-chosen-id-123"}})
	if got := resp.Header.Get("X-Request-Id"); got != "client-chosen-id-123" {
		t.Errorf("X-Request-Id = %q, want the client's id", got)
	}
	resp = env.Send(t, Request{Method: "GET", Path: "/api/nope", Headers: map[string]string{"X-Request-Id": "bad id\u00e9"}})
	if got := resp.Header.Get("X-Request-Id"); !strings.HasPrefix(got, "req_") {
		t.Errorf("X-Request-Id = %q, want a generated id for a malformed one", got)
	}
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, nil)
	other, otherKey := env.CreateObject(t, nil)
	unknown, _ := apikey.Generate(apikey.OwnerPrefix)
	assoc := "/api/objects/" + hash + "/svc-associations"

	env.Do(t, "GET", assoc, "", nil).ExpectError(t, 401, "UNAUTHORIZED")
	env.Do(t, "GET", assoc, "garbage", nil).ExpectError(t, 401, "UNAUTHORIZED")
	env.Do(t, "GET", assoc, mistype(key), nil).ExpectError(t, 401, "UNAUTHORIZED")
	env.Do(t, "GET", assoc, unknown, nil).ExpectError(t, 401, "UNAUTHORIZED")
	env.Send(t, Request{Method: "GET", Path: assoc, Headers: map[string]string{"Authorization": "Basic " + key}}).ExpectError(t, 401, "UNAUTHORIZED")
	env.Do(t, "GET", assoc, otherKey, nil).ExpectError(t, 403, "FORBIDDEN")
	env.Do(t, "GET", "/api/objects/svc_nosuchobject/svc-associations", key, nil).ExpectError(t, 404, "NOT_FOUND")
	// A bad key on a public route is refused rather than silently ignored.
	env.Do(t, "GET", "/api/objects/"+hash, unknown, nil).ExpectError(t, 401, "UNAUTHORIZED")

	// Associations, with the owner key.
	a := env.Do(t, "POST", assoc, key, map[string]any{"peer_hash": other, "role": "partner", "label": "co-author"}).Expect(t, 201).JSON(t)
	id := Str(t, a, "id")
	if Str(t, a, "peer_hash") != other || Str(t, a, "role") != "partner" {
		t.Errorf("association %v does not echo the request", a)
	}
	env.Do(t, "POST", assoc, key, map[string]any{"role": "x"}).ExpectError(t, 400, "MISSING_FIELD")
	env.Do(t, "POST", assoc, key, map[string]any{"peer_hash": "svc_nosuchobject"}).ExpectError(t, 404, "NOT_FOUND")
	list := env.Do(t, "GET", assoc, key, nil).Expect(t, 200).JSON(t)
	if n := len(list["associations"].([]any)); n != 1 {
		t.Fatalf("%d associations listed, want 1", n)
	}
	env.Do(t, "DELETE", assoc+"/"+id, otherKey, nil).ExpectError(t, 403, "FORBIDDEN")
	del := env.Do(t, "DELETE", assoc+"/"+id, key, nil).Expect(t, 200).JSON(t)
	if del["ok"] != true || del["deleted"] != id {
		t.Errorf("delete answered %v", del)
	}
	env.Do(t, "DELETE", assoc+"/"+id, key, nil).ExpectError(t, 404, "NOT_FOUND")
}

func TestSubKeyScopes(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, nil)
	peer, _ := env.CreateObject(t, nil)
	keys := "/api/objects/" + hash + "/keys"
	assoc := "/api/objects/" + hash + "/svc-associations"

	mk := func(scopes ...string) (string, string) {
		r := env.Do(t, "POST", keys, key, map[string]any{"label": "bot " + strings.Join(scopes, "+"), "scopes": scopes}).Expect(t, 201).JSON(t)
		k := Str(t, r, "key")
		if !strings.HasPrefix(k, "ksvc_") || !apikey.Valid(k) {
			t.Fatalf("sub-key %q is not a valid ksvc_ key", k)
		}
		return Str(t, r, "id"), k
	}
	_, reader := mk("read")
	writerID, writer := mk("write")

	env.Do(t, "GET", assoc, reader, nil).Expect(t, 200)
	env.Do(t, "POST", assoc, reader, map[string]any{"peer_hash": peer}).ExpectError(t, 403, "INSUFFICIENT_SCOPE")
	env.Do(t, "POST", assoc, writer, map[string]any{"peer_hash": peer}).Expect(t, 201)
	env.Do(t, "GET", assoc, writer, nil).ExpectError(t, 403, "INSUFFICIENT_SCOPE")
	// Key management needs the owner key itself.
	env.Do(t, "GET", keys, reader, nil).ExpectError(t, 403, "INSUFFICIENT_SCOPE")
	env.Do(t, "POST", keys, writer, map[string]any{"scopes": []string{"read"}}).ExpectError(t, 403, "INSUFFICIENT_SCOPE")
	env.Do(t, "POST", "/api/objects/"+hash+"/rotate-key", writer, nil).ExpectError(t, 403, "INSUFFICIENT_SCOPE")
	env.Do(t, "POST", keys, key, map[string]any{"scopes": []string{"admin"}}).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "POST", keys, key, map[string]any{"scopes": []string{}}).ExpectError(t, 400, "INVALID_REQUEST")

	list := env.Do(t, "GET", keys, key, nil).Expect(t, 200)
	if strings.Contains(string(list.Body), reader) || strings.Contains(string(list.Body), writer) {
		t.Fatal("the key list shows a sub-key again")
	}
	if n := len(list.JSON(t)["keys"].([]any)); n != 2 {
		t.Fatalf("%d keys listed, want 2", n)
	}

	// Revocation: refused within a second by the gateway that had the key cached.
	env.Do(t, "DELETE", keys+"/"+writerID, key, nil).Expect(t, 200)
	time.Sleep(time.Second)
	env.Do(t, "POST", assoc, writer, map[string]any{"peer_hash": peer}).ExpectError(t, 401, "UNAUTHORIZED")
	env.Do(t, "DELETE", keys+"/"+writerID, key, nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "GET", assoc, reader, nil).Expect(t, 200)
}

func TestRotateKey(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, oldKey := env.CreateObject(t, nil)
	assoc := "/api/objects/" + hash + "/svc-associations"
	env.Do(t, "GET", assoc, oldKey, nil).Expect(t, 200) // now cached by the gateway
	r := env.Do(t, "POST", "/api/objects/"+hash+"/rotate-key", oldKey, nil).Expect(t, 200).JSON(t)
	newKey := Str(t, r, "api_key")
	if newKey == oldKey || !apikey.Valid(newKey) {
		t.Fatalf("rotation returned %q", newKey)
	}
	time.Sleep(time.Second)
	env.Do(t, "GET", assoc, oldKey, nil).ExpectError(t, 401, "UNAUTHORIZED")
	env.Do(t, "POST", "/api/objects/"+hash+"/rotate-key", oldKey, nil).ExpectError(t, 401, "UNAUTHORIZED")
	env.Do(t, "GET", assoc, newKey, nil).Expect(t, 200)
}

func TestDirectory(t *testing.T) {
	t.Parallel()
	env := Start(t)
	var public []string
	for i := range 5 {
		h, _ := env.CreateObject(t, map[string]any{"initial_llm_txt": fmt.Sprintf("# Listed %d\n", i)})
		public = append(public, h)
	}
	private, _ := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Hidden one", "visibility": "private"})

	var seen []string
	cursor := ""
	for page := 0; ; page++ {
		path := "/api/directory?limit=2"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		d := env.Do(t, "GET", path, "", nil).Expect(t, 200).JSON(t)
		for _, o := range d["objects"].([]any) {
			seen = append(seen, o.(map[string]any)["hash"].(string))
		}
		next, _ := d["next_cursor"].(string)
		if next == "" {
			break
		}
		if page > 5 {
			t.Fatal("directory paging does not end")
		}
		cursor = next
	}
	if len(seen) != len(public) {
		t.Fatalf("directory listed %v, want the %d public objects", seen, len(public))
	}
	for i, h := range seen { // newest first
		if h != public[len(public)-1-i] {
			t.Fatalf("directory order %v, want newest first %v", seen, public)
		}
	}
	if strings.Contains(strings.Join(seen, ","), private) {
		t.Fatal("a private object is listed in the directory")
	}
	q := env.Do(t, "GET", "/api/directory?q=listed%203", "", nil).Expect(t, 200).JSON(t)
	if objs := q["objects"].([]any); len(objs) != 1 || objs[0].(map[string]any)["title"] != "Listed 3" {
		t.Fatalf("q=listed 3 found %v", objs)
	}
	if objs := env.Do(t, "GET", "/api/directory?q=hidden", "", nil).Expect(t, 200).JSON(t)["objects"].([]any); len(objs) != 0 {
		t.Fatalf("q=hidden found the private object: %v", objs)
	}
	if objs := env.Do(t, "GET", "/api/directory?status=verified", "", nil).Expect(t, 200).JSON(t)["objects"].([]any); len(objs) != 0 {
		t.Fatalf("status=verified lists unclaimed objects: %v", objs)
	}
}

func TestCustomHash(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, nil)
	_, otherKey := env.CreateObject(t, nil)
	claim := func(k string, body map[string]any) *Response {
		return env.Do(t, "POST", "/api/objects/claim-custom-hash", k, body)
	}
	voucher := issueVoucher()

	claim("", map[string]any{"username": "ada"}).ExpectError(t, 401, "UNAUTHORIZED")
	for _, bad := range []string{"ab", "Ada", "a-b", strings.Repeat("a", 33), "sk_live"} {
		claim(key, map[string]any{"username": bad, "payment_reference": voucher}).ExpectError(t, 400, "INVALID_USERNAME")
	}
	claim(key, map[string]any{}).ExpectError(t, 400, "MISSING_FIELD")
	claim(key, map[string]any{"username": "ada"}).ExpectError(t, 402, "PAYMENT_REQUIRED")
	claim(key, map[string]any{"username": "ada", "payment_reference": "svcpay_forged_sig"}).ExpectError(t, 402, "PAYMENT_REQUIRED")

	r := claim(key, map[string]any{"username": "ada", "payment_reference": voucher}).Expect(t, 200).JSON(t)
	if r["hash"] != "svc_ada" || r["previous_hash"] != hash || r["username"] != "ada" || r["paid"] != true {
		t.Fatalf("claim answered %v", r)
	}
	// The previous hash keeps resolving to the same object, now under its new hash.
	for _, h := range []string{hash, "svc_ada"} {
		if got := env.Do(t, "GET", "/api/objects/"+h, "", nil).Expect(t, 200).JSON(t)["hash"]; got != "svc_ada" {
			t.Errorf("GET /api/objects/%s shows hash %v, want svc_ada", h, got)
		}
	}
	env.Do(t, "GET", "/api/objects/"+hash+"/svc-associations", key, nil).Expect(t, 200)
	// A voucher is single use, and a taken username is refused.
	claim(otherKey, map[string]any{"username": "grace", "payment_reference": voucher}).ExpectError(t, 402, "PAYMENT_REQUIRED")
	claim(otherKey, map[string]any{"username": "ada", "payment_reference": issueVoucher()}).ExpectError(t, 409, "HASH_TAKEN")
	// A sub-key may not claim.
	sub := Str(t, env.Do(t, "POST", "/api/objects/svc_ada/keys", key, map[string]any{"scopes": []string{"read", "write"}}).Expect(t, 201).JSON(t), "key")
	claim(sub, map[string]any{"username": "adb", "payment_reference": issueVoucher()}).ExpectError(t, 403, "INSUFFICIENT_SCOPE")
}

// Internal calls a service's internal API with an internal token, as another service would.
func (e *Env) Internal(t testing.TB, service, method, path string) map[string]any {
	t.Helper()
	return e.internal(t, service, method, path, true).Expect(t, 200).JSON(t)
}

// internal calls a service directly, with an internal token when token is set.
func (e *Env) internal(t testing.TB, service, method, path string, token bool) *Response {
	t.Helper()
	bearer := ""
	if token {
		bearer = e.mint(t, e.ServiceJWTKey, "e2e", service, nil, nil)
	}
	return e.callService(t, service, method, path, bearer)
}

// mint signs an internal token with key (GatewayJWTKey or ServiceJWTKey) for service.
func (e *Env) mint(t testing.TB, key, issuer, service string, p *authn.Principal, target *authn.Target) string {
	t.Helper()
	k, err := authn.ParseSigningKey(key)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := k.Mint(issuer, service, p, target, "")
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// callService sends a request to a service's first instance, bypassing the gateway, with token
// as the bearer when not empty.
func (e *Env) callService(t testing.TB, service, method, path, token string) *Response {
	t.Helper()
	req, _ := http.NewRequest(method, strings.Split(e.Stack.ServiceURLs[service], ",")[0]+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	r := &Response{Status: res.StatusCode, Header: res.Header, method: method, path: path}
	r.Body, _ = io.ReadAll(res.Body)
	return r
}

// mistype changes the last character of a key, as a typo would.
func mistype(key string) string {
	last := byte('x')
	if key[len(key)-1] == last {
		last = 'y'
	}
	return key[:len(key)-1] + string(last)
}

// TestRevocationSurvivesConcurrentUse revokes a sub-key while it is being used from many
// connections, then removes every cached answer from Redis (as if the tombstone had expired):
// the key must still be refused, because the revocation itself is durable in the store.
func TestRevocationSurvivesConcurrentUse(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, nil)
	keys := "/api/objects/" + hash + "/keys"
	sub := env.Do(t, "POST", keys, key, map[string]any{"scopes": []string{"read"}}).Expect(t, 201).JSON(t)
	subKey, subID := Str(t, sub, "key"), Str(t, sub, "id")
	rdb, err := service.ConnectRedis(context.Background(), env.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = rdb.Del(context.Background(), identity.KeyCacheKey(apikey.Digest(subKey))) // force lookups
				env.send(t, Request{Method: "GET", Path: "/api/objects/" + hash + "/svc-associations", Key: subKey})
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	env.Do(t, "DELETE", keys+"/"+subID, key, nil).Expect(t, 200)
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()

	if err := rdb.Del(context.Background(), identity.KeyCacheKey(apikey.Digest(subKey))).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // past the gateway's in-process cache
	env.Do(t, "GET", "/api/objects/"+hash+"/svc-associations", subKey, nil).ExpectError(t, 401, "UNAUTHORIZED")
	if list := env.Do(t, "GET", keys, key, nil).Expect(t, 200).JSON(t)["keys"].([]any); len(list) != 0 {
		t.Fatalf("a revoked key is still listed: %v", list)
	}
}
