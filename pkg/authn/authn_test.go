package authn

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/pkg/httpx"
)

// keys returns a gateway key, a services' key and the verifier of a service holding both.
func keys(t *testing.T) (gateway, service *SigningKey, v *Verifier) {
	t.Helper()
	gateway, err := ParseSigningKey(GenerateSeed())
	if err != nil {
		t.Fatal(err)
	}
	service, err = ParseSigningKey(GenerateSeed())
	if err != nil {
		t.Fatal(err)
	}
	v, err = NewVerifier(gateway.Public(), service)
	if err != nil {
		t.Fatal(err)
	}
	return gateway, service, v
}

func TestMintAndVerify(t *testing.T) {
	t.Parallel()
	gateway, service, v := keys(t)
	p := &Principal{ObjectID: "obj_1", KeyID: "key_1", Scopes: []string{ScopeRead}}
	tok, err := gateway.Mint(GatewayIssuer, "identity-svc", p, &Target{ObjectID: "obj_1"}, "req_1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := v.Verify(tok, "identity-svc")
	if err != nil || c.Principal.ObjectID != "obj_1" || c.Target.ObjectID != "obj_1" || c.RequestID != "req_1" {
		t.Fatalf("verify: %+v, %v", c, err)
	}
	if _, err := v.Verify(tok, "mailbox-svc"); err == nil {
		t.Error("a token for identity-svc verified for mailbox-svc")
	}
	_, _, other := keys(t)
	if _, err := other.Verify(tok, "identity-svc"); err == nil {
		t.Error("a token verified under another gateway key")
	}
	parts := strings.Split(tok, ".")
	if _, err := v.Verify(parts[0]+"."+parts[1]+".", "identity-svc"); err == nil {
		t.Error("an unsigned token verified")
	}
	plain, err := service.Mint("mailbox-svc", "identity-svc", nil, nil, "req_2")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := v.Verify(plain, "identity-svc"); err != nil || c.Principal != nil || c.RequestID != "req_2" {
		t.Errorf("a service's token without a principal: %+v, %v", c, err)
	}
	if !p.HasScope(ScopeRead) || p.HasScope(ScopeWrite) || !(&Principal{Owner: true}).HasScope(ScopeMailbox) {
		t.Error("HasScope: owner keys hold every scope, sub-keys only theirs")
	}
}

// TestServiceTokenClaimingAPrincipalIsRefused: a service holds the services' key, not the
// gateway's, so whatever principal or target it writes into a token, under whatever issuer, a
// service answers 401; its tokens without either pass, and so do the gateway's.
func TestServiceTokenClaimingAPrincipalIsRefused(t *testing.T) {
	t.Parallel()
	gateway, service, v := keys(t)
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.GET("/api/objects/:hash/keys", Require(v, "identity-svc"), func(c *gin.Context) {
		if _, _, err := Owner(c); err != nil {
			httpx.Abort(c, err)
			return
		}
		c.String(http.StatusOK, PrincipalFrom(c).ObjectID)
	})
	e.GET("/internal/v1/resolve", Require(v, "identity-svc"), func(c *gin.Context) { c.Status(http.StatusOK) })
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)

	victim := &Principal{ObjectID: "obj_victim", KeyID: "key_victim", Owner: true}
	target := &Target{ObjectID: "obj_victim", Hash: "svc_victim", Visibility: "private"}
	mint := func(k *SigningKey, issuer string, p *Principal, tg *Target) string {
		tok, err := k.Mint(issuer, "identity-svc", p, tg, "")
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	for _, tc := range []struct {
		name, path, token string
		want              int
	}{
		{"service key, own issuer, principal", "/api/objects/svc_victim/keys", mint(service, "mailbox-svc", victim, target), 401},
		{"service key, gateway issuer, principal", "/api/objects/svc_victim/keys", mint(service, GatewayIssuer, victim, target), 401},
		{"service key, principal on an internal route", "/internal/v1/resolve", mint(service, "mailbox-svc", victim, nil), 401},
		{"service key, target only", "/internal/v1/resolve", mint(service, "mailbox-svc", nil, target), 401},
		{"service key, no principal, owner route", "/api/objects/svc_victim/keys", mint(service, "mailbox-svc", nil, nil), 401},
		{"service key, no principal, internal route", "/internal/v1/resolve", mint(service, "mailbox-svc", nil, nil), 200},
		{"gateway key, principal", "/api/objects/svc_victim/keys", mint(gateway, GatewayIssuer, victim, target), 200},
		{"gateway key, another issuer", "/internal/v1/resolve", mint(gateway, "mailbox-svc", nil, nil), 401},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+tc.path, nil)
		req.Header.Set("Authorization", "Bearer "+tc.token)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, res.StatusCode, tc.want)
		}
	}
}

func TestNewVerifierRefusesTheGatewaysKeyAsTheServices(t *testing.T) {
	t.Parallel()
	k, err := ParseSigningKey(GenerateSeed())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewVerifier(k.Public(), k); err == nil {
		t.Error("a service was given the gateway's signing key as the services' key")
	}
}

// TestParseKeyForms reads the forms the chart, compose and openssl produce: base64 of the raw
// key, PEM PKCS #8 and PKIX, and a PEM certificate.
func TestParseKeyForms(t *testing.T) {
	t.Parallel()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(priv)
	spki, _ := x509.MarshalPKIXPublicKey(pub)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "svc-gateway-jwt"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	cert, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	if err != nil {
		t.Fatal(err)
	}
	pemOf := func(typ string, der []byte) string {
		return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
	}
	for _, s := range []string{base64.StdEncoding.EncodeToString(priv.Seed()), pemOf("PRIVATE KEY", pkcs8)} {
		k, err := ParseSigningKey(s)
		if err != nil || !k.Public().Equal(pub) {
			t.Errorf("ParseSigningKey(%.30q): %v", s, err)
		}
	}
	for _, s := range []string{base64.StdEncoding.EncodeToString(pub), pemOf("PUBLIC KEY", spki), pemOf("CERTIFICATE", cert)} {
		got, err := ParsePublicKey(s)
		if err != nil || !got.Equal(pub) {
			t.Errorf("ParsePublicKey(%.30q): %v", s, err)
		}
	}
	for _, s := range []string{"", "not base64!", "c2hvcnQ=", pemOf("PRIVATE KEY", []byte("junk")), pemOf("PUBLIC KEY", spki)} {
		if _, err := ParseSigningKey(s); err == nil {
			t.Errorf("ParseSigningKey(%.30q) accepted a bad key", s)
		}
	}
	for _, s := range []string{"", "c2hvcnQ=", pemOf("PRIVATE KEY", pkcs8), pemOf("CERTIFICATE", []byte("junk"))} {
		if _, err := ParsePublicKey(s); err == nil {
			t.Errorf("ParsePublicKey(%.30q) accepted a bad key", s)
		}
	}
}
