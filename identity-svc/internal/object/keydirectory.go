package object

import (
	"context"
	"crypto/ed25519"
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
	if obj, err = s.withKey(ctx, obj, err); err != nil {
		return nil, nil, err
	}
	active := keySet(obj).Active()
	key := signing.PublicJWK{Kty: "OKP", Crv: "Ed25519", X: active.X, KID: active.KID, Alg: signing.Alg}
	if active.HeldBy != signing.HeldBySvc {
		return s.directory(key, nil)
	}
	priv, _, err := s.activeKey(obj)
	if err != nil {
		return nil, nil, err
	}
	return s.directory(key, priv)
}

// ServiceKeyDirectory is svc's own key directory: the key its outbound requests (webhook
// deliveries, claim checks, ingest and sync fetches) are signed with, the answer signed by it
// for svc's host.
func (s *Service) ServiceKeyDirectory() (*KeyDirectory, http.Header, error) {
	if s.RequestSigner == nil {
		return nil, nil, apierr.NotFound("key directory")
	}
	k := s.RequestSigner
	key := signing.PublicJWK{Kty: "OKP", Crv: "Ed25519", X: b64(k.Key.Public().(ed25519.PublicKey)), KID: k.KeyID, Alg: signing.Alg}
	return s.directory(key, k.Key)
}

// directory is the key directory of key and the headers that sign its answer with priv for svc's
// host (none when priv is nil).
func (s *Service) directory(key signing.PublicJWK, priv ed25519.PrivateKey) (*KeyDirectory, http.Header, error) {
	dir, h := &KeyDirectory{Keys: []signing.PublicJWK{key}}, http.Header{}
	if priv == nil {
		return dir, h, nil
	}
	base, err := url.Parse(s.BaseURL)
	if err != nil {
		return nil, nil, err
	}
	if err := httpsig.SignDirectory(h, base.Host, priv, key.KID, time.Now(), directoryTTL); err != nil {
		return nil, nil, err
	}
	return dir, h, nil
}

// ServiceDID is svc's own did:web document (did:web:<host>), served at /.well-known/did.json:
// the key of its signed requests and of its own agent card, and its services.
func (s *Service) ServiceDID() (signing.DIDDocument, error) {
	if s.RequestSigner == nil {
		return signing.DIDDocument{}, apierr.NotFound("DID document")
	}
	did, err := signing.DIDWeb(s.BaseURL, "")
	if err != nil {
		return signing.DIDDocument{}, err
	}
	k := s.RequestSigner
	keys := signing.KeySet{Keys: []signing.Key{{KID: k.KeyID, X: b64(k.Key.Public().(ed25519.PublicKey)), HeldBy: signing.HeldBySvc}}}
	return signing.NewDIDDocument(did, keys, []string{s.BaseURL}, []signing.DIDService{
		{ID: did + "#a2a", Type: "A2AAgentCard", ServiceEndpoint: s.BaseURL + "/.well-known/agent-card.json"},
		{ID: did + "#mcp", Type: "MCPServer", ServiceEndpoint: s.BaseURL + "/mcp"},
		{ID: did + "#llm", Type: "LLMsTxt", ServiceEndpoint: s.BaseURL + "/llms.txt"},
		{ID: did + "#keys", Type: "HTTPMessageSignaturesDirectory", ServiceEndpoint: s.BaseURL + httpsig.DirectoryPath},
	}), nil
}
