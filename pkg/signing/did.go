package signing

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// DIDContentType is the media type of a DID document in its JSON-LD representation.
const DIDContentType = "application/did+ld+json"

// DIDWeb is the did:web identifier of the document served at base + path (path starting with
// "/", without its final "/did.json"): the host, its port's colon percent-encoded, then every
// segment of base's path and of path, colon-separated, as the did:web method spells a URL. An
// object's DID is DIDWeb(base, "/api/objects/"+hash); the service's own is DIDWeb(base, "").
func DIDWeb(base, path string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("did:web of %q: the base URL has no host", base)
	}
	parts := []string{"did:web", strings.ReplaceAll(u.Host, ":", "%3A")}
	for _, seg := range strings.Split(strings.Trim(u.Path, "/")+"/"+strings.Trim(path, "/"), "/") {
		if seg != "" {
			parts = append(parts, url.PathEscape(seg))
		}
	}
	return strings.Join(parts, ":"), nil
}

// DIDDocument is a DID document (W3C DID Core 1.0) of an object or of the service.
type DIDDocument struct {
	Context            []string             `json:"@context"`
	ID                 string               `json:"id"`
	AlsoKnownAs        []string             `json:"alsoKnownAs,omitempty"`
	VerificationMethod []VerificationMethod `json:"verificationMethod"`
	Authentication     []string             `json:"authentication"`
	AssertionMethod    []string             `json:"assertionMethod"`
	Service            []DIDService         `json:"service,omitempty"`
}

// VerificationMethod is one key of a DID document: a JsonWebKey2020 whose id is the DID with the
// key's RFC 7638 thumbprint (its kid in jwks.json) as fragment.
type VerificationMethod struct {
	ID           string    `json:"id"`
	Type         string    `json:"type"`
	Controller   string    `json:"controller"`
	PublicKeyJWK PublicJWK `json:"publicKeyJwk"`
}

// PublicJWK is the public key of a verification method: the members of jwks.json's key that a
// JOSE library reads, without svc's own.
type PublicJWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	KID string `json:"kid"`
	Alg string `json:"alg"`
}

// DIDService is a service endpoint of a DID document.
type DIDService struct {
	ID              string `json:"id"`
	Type            string `json:"type"`
	ServiceEndpoint string `json:"serviceEndpoint"`
}

// NewDIDDocument is the DID document of did with keys: every key a verification method, so that
// a signature made before a rotation still finds its key by kid; only the active key
// authenticates and asserts, as jwks.json marks the others rotated.
func NewDIDDocument(did string, keys KeySet, alsoKnownAs []string, services []DIDService) DIDDocument {
	d := DIDDocument{
		Context:            []string{"https://www.w3.org/ns/did/v1", "https://w3id.org/security/suites/jws-2020/v1"},
		ID:                 did,
		AlsoKnownAs:        alsoKnownAs,
		VerificationMethod: make([]VerificationMethod, 0, len(keys.Keys)),
		Authentication:     []string{},
		AssertionMethod:    []string{},
		Service:            services,
	}
	for _, k := range slices.Backward(keys.Keys) { // newest first, as in jwks.json
		vm := VerificationMethod{ID: did + "#" + k.KID, Type: "JsonWebKey2020", Controller: did,
			PublicKeyJWK: PublicJWK{Kty: "OKP", Crv: "Ed25519", X: k.X, KID: k.KID, Alg: Alg}}
		d.VerificationMethod = append(d.VerificationMethod, vm)
	}
	if a := keys.Active(); a != nil {
		d.Authentication = append(d.Authentication, did+"#"+a.KID)
		d.AssertionMethod = append(d.AssertionMethod, did+"#"+a.KID)
	}
	return d
}
