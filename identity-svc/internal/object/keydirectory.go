package object

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"net/url"
	"time"

	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/httpsig"
	"github.com/svcdev/svc/pkg/signing"
)

// directoryTTL is how long the signature of a key directory's answer is valid.
const directoryTTL = 5 * time.Minute

// KeyDirectory is an object's HTTP message signatures directory (Web Bot Auth): the key its
// signed requests verify with, the active one only, since a request signature lives minutes.
type KeyDirectory struct {
	Keys []signing.PublicJWK `json:"keys"`
}

// KeyDirectory returns the key directory of the object a hash names, as viewer may read it, and, when svc holds its
// active key, the headers that sign the answer for svc's host (a directory whose owner holds the
// key is served unsigned: svc cannot sign for it).
func (s *Service) KeyDirectory(ctx context.Context, hash, viewer string) (*KeyDirectory, http.Header, error) {
	obj, err := s.Read(ctx, hash, viewer)
	if err != nil {
		return nil, nil, err
	}
	if obj, err = s.withKey(ctx, obj); err != nil {
		return nil, nil, err
	}
	active := keySet(obj).Active()
	dir := &KeyDirectory{Keys: []signing.PublicJWK{{Kty: "OKP", Crv: "Ed25519", X: active.X, KID: active.KID, Alg: signing.Alg}}}
	h := http.Header{}
	if active.HeldBy != signing.HeldBySvc {
		return dir, h, nil
	}
	priv, kid, err := s.activeKey(obj)
	if err != nil {
		return nil, nil, err
	}
	base, err := url.Parse(s.BaseURL)
	if err != nil {
		return nil, nil, err
	}
	if err := httpsig.SignDirectory(h, base.Host, priv, kid, time.Now(), directoryTTL); err != nil {
		return nil, nil, err
	}
	return dir, h, nil
}

// ServiceKeyDirectory is svc's own key directory: the key its outbound requests (webhook
// deliveries, claim checks, ingest and sync fetches) are signed with, the answer signed by it
// for svc's host.
func (s *Service) ServiceKeyDirectory() (*KeyDirectory, http.Header, error) {
	if s.RequestSigner == nil {
		return nil, nil, apierr.NotFound("key directory")
	}
	k := s.RequestSigner
	dir := &KeyDirectory{Keys: []signing.PublicJWK{{Kty: "OKP", Crv: "Ed25519",
		X: base64.RawURLEncoding.EncodeToString(k.Key.Public().(ed25519.PublicKey)), KID: k.KeyID, Alg: signing.Alg}}}
	base, err := url.Parse(s.BaseURL)
	if err != nil {
		return nil, nil, err
	}
	h := http.Header{}
	if err := httpsig.SignDirectory(h, base.Host, k.Key, k.KeyID, time.Now(), directoryTTL); err != nil {
		return nil, nil, err
	}
	return dir, h, nil
}
