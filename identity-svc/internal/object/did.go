package object

import (
	"context"
	"net/url"
	"slices"

	"github.com/svcdev/svc/pkg/signing"
)

// DID is the did:web document of the object a hash names (any of its hashes: a DID made from a
// hash it had before a custom hash keeps resolving), built on BaseURL, the public URL svc answers
// at. Its id is the DID of the hash asked for, as the did:web method requires; the DIDs of the
// object's other hashes and its box page are alsoKnownAs. viewer is the caller's object ("" for
// none): a private object's DID is its own to read, and 404 for every other caller, a resolver
// included, as its other public reads.
func (s *Service) DID(ctx context.Context, hash, viewer string) (signing.DIDDocument, error) {
	base := s.BaseURL
	obj, err := s.Read(ctx, hash, viewer)
	if obj, err = s.withKey(ctx, obj, err); err != nil {
		return signing.DIDDocument{}, err
	}
	did, err := signing.DIDWeb(base, objectPath(hash))
	if err != nil {
		return signing.DIDDocument{}, err
	}
	aka := []string{base + "/" + url.PathEscape(obj.Hash)}
	for _, h := range slices.Concat([]string{obj.Hash}, obj.Hashes) {
		if other, err := signing.DIDWeb(base, objectPath(h)); err == nil && h != hash && !slices.Contains(aka, other) {
			aka = append(aka, other)
		}
	}
	at := base + objectPath(obj.Hash)
	return signing.NewDIDDocument(did, keySet(obj), aka, []signing.DIDService{
		{ID: did + "#a2a", Type: "A2AAgentCard", ServiceEndpoint: at + "/agent-card.json"},
		{ID: did + "#mcp", Type: "MCPServer", ServiceEndpoint: base + "/mcp"},
		{ID: did + "#llm", Type: "LLMsTxt", ServiceEndpoint: at + "/llm.txt"},
		{ID: did + "#jwks", Type: "JsonWebKeySet", ServiceEndpoint: at + "/jwks.json"},
		{ID: did + "#mailbox", Type: "SvcMailbox", ServiceEndpoint: base + "/api/messages"},
	}), nil
}

// objectPath is the path of an object's public routes.
func objectPath(hash string) string { return "/api/objects/" + url.PathEscape(hash) }
