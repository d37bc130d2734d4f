package proxy

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/gateway/internal/auth"
	"github.com/svcdev/svc/gateway/internal/ratelimit"
	"github.com/svcdev/svc/gateway/internal/routes"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/embedded"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/service"
)

func TestAuthorize(t *testing.T) {
	t.Parallel()
	own := &authn.Target{ObjectID: "obj_a"}
	other := &authn.Target{ObjectID: "obj_b", Visibility: "public"}
	private := &authn.Target{ObjectID: "obj_c", Visibility: "private"}
	owner := &authn.Principal{ObjectID: "obj_a", Owner: true}
	reader := &authn.Principal{ObjectID: "obj_a", Scopes: []string{"read"}}
	mailReader := &authn.Principal{ObjectID: "obj_a", Scopes: []string{"read", "mailbox"}}
	get := routes.Route{Method: "GET", Auth: routes.Owner}
	post := routes.Route{Method: "POST", Auth: routes.Owner}
	mailbox := routes.Route{Method: "GET", Auth: routes.Owner, Mailbox: true}
	keys := routes.Route{Method: "GET", Auth: routes.OwnerKey}
	cases := []struct {
		name string
		r    routes.Route
		p    *authn.Principal
		t    *authn.Target
		want string
	}{
		{"owner reads own", get, owner, own, ""},
		{"owner on another object", get, owner, other, httpx.CodeForbidden},
		{"owner on another, private object", get, owner, private, httpx.CodeNotFound},
		{"sub-key on another, private object", keys, mailReader, private, httpx.CodeNotFound},
		{"reader reads", get, reader, own, ""},
		{"reader writes", post, reader, own, httpx.CodeInsufficientScope},
		{"reader without mailbox", mailbox, reader, own, httpx.CodeInsufficientScope},
		{"reader with mailbox", mailbox, mailReader, own, ""},
		{"sub-key on owner-key route", keys, mailReader, own, httpx.CodeInsufficientScope},
		{"owner on owner-key route", keys, owner, own, ""},
		{"route without hash", mailbox, mailReader, nil, ""},
		{"public", routes.Route{Method: "GET", Auth: routes.Public}, nil, own, ""},
	}
	for _, c := range cases {
		err := Authorize(c.r, c.p, c.t)
		got := ""
		if err != nil {
			got = httpx.AsError(err).Code
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

type staticIdentity struct {
	digest string
	obj    identity.Object
}

func (s staticIdentity) CachedKey(ctx context.Context, digest string) (*authn.Principal, error) {
	return s.LookupKey(ctx, digest)
}

func (s staticIdentity) LookupKey(_ context.Context, digest string) (*authn.Principal, error) {
	if digest != s.digest {
		return nil, identity.ErrNotFound
	}
	return &authn.Principal{ObjectID: s.obj.ObjectID, Hash: s.obj.Hash, KeyID: "key_1", Owner: true}, nil
}

func (s staticIdentity) Resolve(_ context.Context, hash string) (*identity.Object, error) {
	if hash != s.obj.Hash {
		return nil, identity.ErrNotFound
	}
	return &s.obj, nil
}

// BenchmarkOwnerRoute measures the gateway's whole path for an owner route with a cached key,
// client to gateway to service over loopback HTTP (Redis is miniredis unless REDIS_URL names a
// real server; miniredis interprets the rate limiter's Lua script slowly):
// rate limit in Redis, authentication, hash resolution, scope check, internal token, and the
// proxied round trip to a service that verifies the token.
func BenchmarkOwnerRoute(b *testing.B) {
	redisURL := os.Getenv("REDIS_URL")
	if redisURL == "" {
		rds, err := embedded.StartRedis()
		if err != nil {
			b.Fatal(err)
		}
		defer rds.Stop()
		redisURL = rds.URL
	}
	rdb, err := service.ConnectRedis(context.Background(), redisURL)
	if err != nil {
		b.Fatal(err)
	}
	defer rdb.Close()
	gatewayKey, err := authn.ParseSigningKey(authn.GenerateSeed())
	if err != nil {
		b.Fatal(err)
	}
	serviceKey, err := authn.ParseSigningKey(authn.GenerateSeed())
	if err != nil {
		b.Fatal(err)
	}
	verifier, err := authn.NewVerifier(gatewayKey.Public(), serviceKey)
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	upstream := httpx.NewEngine(log, nil)
	upstream.GET("/api/objects/:hash/keys", authn.Require(verifier, "identity-svc"), func(c *gin.Context) {
		c.JSON(http.StatusOK, gin.H{"keys": []any{}})
	})
	srv := httptest.NewServer(upstream)
	defer srv.Close()

	key, digest := apikey.Generate(apikey.OwnerPrefix)
	id := staticIdentity{digest: digest, obj: identity.Object{ObjectID: "obj_1", Hash: "svc_bench", Visibility: "public"}}
	limits := ratelimit.Config{OwnerPerMin: 1 << 30, OwnerBurst: 1 << 30}
	g, err := New(auth.New(id), id, ratelimit.New(rdb), ratelimit.NewPoller(rdb, 0), limits, gatewayKey, map[string]string{"identity-svc": srv.URL}, log)
	if err != nil {
		b.Fatal(err)
	}
	route := routes.Route{Method: "GET", Path: "/api/objects/{hash}/keys", Service: "identity-svc", Auth: routes.OwnerKey}
	e := httpx.NewEngine(log, nil)
	e.GET("/api/objects/:hash/keys", g.Handler(route))

	gw := httptest.NewServer(e)
	defer gw.Close()
	client := gw.Client()

	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest("GET", gw.URL+"/api/objects/svc_bench/keys", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

// TestPeekFieldReadsNestedMembers: a recipient named by a dotted path is read from the nested
// member, the body is put back whole, a member that differs from the path only by case is
// refused as the services refuse it, and a body without the member names no recipient.
func TestPeekFieldReadsNestedMembers(t *testing.T) {
	gin.SetMode(gin.TestMode)
	peek := func(body string) (string, string, error) {
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest(http.MethodPost, "/a2a/message:send", strings.NewReader(body))
		v, err := peekField(c, "message.metadata.to_hash")
		rest, _ := io.ReadAll(c.Request.Body)
		return v, string(rest), err
	}
	body := `{"message":{"metadata":{"to_hash":" svc_bob ","from_hash":"svc_alice"}}}`
	if v, rest, err := peek(body); v != "svc_bob" || err != nil || rest != body {
		t.Fatalf("peek = %q, %v, body %q", v, err, rest)
	}
	if _, _, err := peek(`{"message":{"Metadata":{"to_hash":"svc_bob"}}}`); err == nil {
		t.Error("a member differing by case only was not refused")
	}
	for _, b := range []string{`{"message":{}}`, `{"message":"x"}`, `not json`, `{"message":{"metadata":{"to_hash":7}}}`} {
		if v, _, err := peek(b); v != "" || err != nil {
			t.Errorf("%s: peek = %q, %v; want no recipient", b, v, err)
		}
	}
}
