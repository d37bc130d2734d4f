package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/golang-jwt/jwt/v5"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/rpc"
	"github.com/svcdev/svc/pkg/signing"
)

// AssertionType is the client_assertion_type of private_key_jwt (RFC 7523).
const AssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// MaxAssertionLifetime bounds how far ahead a client assertion may expire: its jti is
// remembered until then, so that it is redeemed once.
const MaxAssertionLifetime = 5 * time.Minute

// assertionAlgs are the JWS algorithms of an Ed25519 assertion: EdDSA, and Ed25519, its fully
// specified name (RFC 9864), which clients such as oauth4webapi send.
var assertionAlgs = []string{jwt.SigningMethodEdDSA.Alg(), "Ed25519"}

var registerEd25519 sync.Once

// ed25519Method is golang-jwt's EdDSA under the name Ed25519. golang-jwt looks methods up in a
// process-wide table only, so it is registered there once, by New.
type ed25519Method struct{ *jwt.SigningMethodEd25519 }

func (ed25519Method) Alg() string { return "Ed25519" }

func registerAlgorithms() {
	registerEd25519.Do(func() {
		jwt.RegisterSigningMethod("Ed25519", func() jwt.SigningMethod { return ed25519Method{jwt.SigningMethodEdDSA} })
	})
}

// clientCredentials serves grant_type=client_credentials for a headless agent: the client is the
// object itself (client_id is its hash), authenticated by a private_key_jwt assertion signed
// with an active signing key the owner holds (registered with POST …/signing-keys), so no
// secret is copied anywhere. Its grant is a sub-key of the object like any other, made once per
// signing key and scopes and reused while it is active; no refresh token is issued (the client
// signs a new assertion instead).
func (s *Server) clientCredentials(c *gin.Context) {
	ctx := c.Request.Context()
	form := c.Request.PostForm
	if form.Get("client_assertion_type") != AssertionType || form.Get("client_assertion") == "" {
		tokenError(c, http.StatusUnauthorized, "invalid_client", "client_credentials needs a private_key_jwt client assertion")
		return
	}
	scopes, ok := parseScope(form.Get("scope"))
	if !ok {
		tokenError(c, http.StatusBadRequest, "invalid_scope", "scope must be a space-separated subset of "+strings.Join(Scopes, " "))
		return
	}
	client, err := s.verifyAssertion(ctx, form.Get("client_assertion"), form.Get("client_id"))
	if err != nil {
		var refused errAssertion
		if errors.As(err, &refused) {
			if err := s.charge(c)(ctx); err != nil {
				httpx.Abort(c, err)
				return
			}
			tokenError(c, http.StatusUnauthorized, "invalid_client", refused.Error())
			return
		}
		httpx.Abort(c, httpx.Unavailable(err))
		return
	}
	g, err := s.machineGrant(c, client, scopes)
	if err != nil {
		var status *rpc.StatusError
		if errors.As(err, &status) && status.Status < 500 {
			tokenError(c, http.StatusBadRequest, "invalid_request", "the object could not take another sub-key: revoke an unused one")
			return
		}
		httpx.Abort(c, err)
		return
	}
	s.issue(c, g, false)
}

// errAssertion is an assertion refused: its message is the client's to read.
type errAssertion struct{ msg string }

func (e errAssertion) Error() string { return e.msg }

// machineClient is the object an assertion authenticated, and the key that signed it.
type machineClient struct {
	ObjectID string
	Hash     string
	KID      string
}

// verifyAssertion checks a client assertion: iss and sub are the object's hash (and client_id,
// when sent), the header's kid names an active signing key of the object that its owner holds
// (a key svc holds signs messages and cards for the object, never its credentials), aud is
// the issuer or the token endpoint, it expires within MaxAssertionLifetime, and its jti was
// never used.
func (s *Server) verifyAssertion(ctx context.Context, assertion, clientID string) (*machineClient, error) {
	var claims jwt.RegisteredClaims
	var client machineClient
	var lookup error
	_, err := jwt.ParseWithClaims(assertion, &claims, func(tok *jwt.Token) (any, error) {
		kid, _ := tok.Header["kid"].(string)
		if claims.Issuer == "" || claims.Subject != claims.Issuer || (clientID != "" && clientID != claims.Issuer) {
			return nil, errors.New("iss and sub must both be the object's hash, and client_id too")
		}
		key, err := s.signingKey(ctx, claims.Issuer, kid, &client)
		if err != nil {
			lookup = err
			return nil, err
		}
		return key, nil
	}, jwt.WithValidMethods(assertionAlgs), jwt.WithExpirationRequired(), jwt.WithLeeway(5*time.Second))
	var refused errAssertion
	switch {
	case errors.As(lookup, &refused):
		return nil, refused
	case lookup != nil:
		return nil, lookup
	case err != nil:
		return nil, errAssertion{msg: "the client assertion is not valid: " + err.Error()}
	case !slices.Contains(claims.Audience, s.issuer) && !slices.Contains(claims.Audience, s.issuer+TokenPath):
		return nil, errAssertion{msg: "the client assertion's aud must be " + s.issuer}
	case claims.ID == "":
		return nil, errAssertion{msg: "the client assertion needs a jti"}
	case time.Until(claims.ExpiresAt.Time) > MaxAssertionLifetime:
		return nil, errAssertion{msg: fmt.Sprintf("the client assertion may expire at most %s ahead", MaxAssertionLifetime)}
	}
	// The jti is remembered until the assertion expires: a replay within that time is refused.
	sum := sha256.Sum256([]byte(client.ObjectID + "|" + claims.ID))
	fresh, err := s.opts.Redis.SetNX(ctx, "svc:oauth:jti:"+hex.EncodeToString(sum[:]), 1, time.Until(claims.ExpiresAt.Time)+10*time.Second).Result()
	if err != nil {
		return nil, err
	}
	if !fresh {
		return nil, errAssertion{msg: "the client assertion was already used"}
	}
	return &client, nil
}

// signingKey returns the public key kid of the object hash names, if it is active and held by
// the owner; the cached key set is asked again once for a kid it does not know.
func (s *Server) signingKey(ctx context.Context, hash, kid string, into *machineClient) (any, error) {
	obj, err := s.opts.Identity.Resolve(ctx, hash)
	if err != nil {
		return nil, errAssertion{msg: "no object has the hash " + hash}
	}
	set, err := s.opts.Identity.SigningKeys(ctx, obj.ObjectID)
	if err == nil && set.Find(kid) == nil {
		set, err = s.opts.Identity.FreshSigningKeys(ctx, obj.ObjectID)
	}
	if err != nil {
		return nil, err
	}
	k := set.Find(kid)
	switch {
	case k == nil:
		return nil, errAssertion{msg: "kid names no signing key of the object"}
	case k.RotatedAt != nil:
		return nil, errAssertion{msg: "the signing key was rotated"}
	case k.HeldBy != signing.HeldByOwner:
		return nil, errAssertion{msg: "the signing key is held by svc: register a key the owner holds (POST /api/objects/{hash}/signing-keys with a jwk)"}
	}
	pub, err := k.PublicKey()
	if err != nil {
		return nil, errAssertion{msg: "the signing key is not an Ed25519 key"}
	}
	*into = machineClient{ObjectID: obj.ObjectID, Hash: obj.Hash, KID: kid}
	return pub, nil
}

// machineGrant is the sub-key of a headless client's grant: the one made before for this
// signing key and these scopes while it is active, else a new one.
func (s *Server) machineGrant(c *gin.Context, client *machineClient, scopes []string) (*grant, error) {
	ctx := c.Request.Context()
	sorted := slices.Sorted(slices.Values(scopes))
	key := "svc:oauth:client:" + client.ObjectID + ":" + client.KID + ":" + strings.Join(sorted, "+")
	var g grant
	if err := get(ctx, s.opts.Redis, key, &g); err == nil {
		// identity-svc itself, which records the grant's use (see grantActive).
		_, err := s.opts.Identity.LookupKey(ctx, g.Digest)
		if err == nil {
			return &g, nil
		}
		if !errors.Is(err, identity.ErrNotFound) && !errors.Is(err, identity.ErrRevoked) {
			return nil, httpx.Unavailable(err)
		}
	} else if !errors.Is(err, errGone) {
		return nil, httpx.Unavailable(err)
	}
	gk, err := s.opts.Identity.CreateGrantKey(ctx, client.ObjectID, contract.GrantKeyRequest{
		Label: "client_credentials (signing key " + client.KID[:min(8, len(client.KID))] + ")", Scopes: scopes, ApprovedBy: "sigkey:" + client.KID})
	if err != nil {
		var status *rpc.StatusError
		if errors.As(err, &status) && status.Status < 500 {
			return nil, err
		}
		return nil, httpx.Unavailable(err)
	}
	g = grant{ObjectID: client.ObjectID, KeyID: gk.KeyID, Digest: gk.Digest, ClientID: client.Hash, Scopes: gk.Scopes}
	if err := put(ctx, s.opts.Redis, key, g, RefreshTTL); err != nil {
		return nil, httpx.Unavailable(err)
	}
	return &g, nil
}
