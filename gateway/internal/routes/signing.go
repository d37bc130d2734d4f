package routes

// Signing are the routes of objects' signing keys (identity-svc): the public key set every
// signature of an object is checked against, and the owner's key registration.
var Signing = []Route{
	{Method: "GET", Path: "/api/objects/{hash}/jwks.json", Service: "identity-svc", Auth: Public, Cacheable: true,
		Summary: "The object's public signing keys (RFC 7517 JWK Set), newest first; rotated keys stay, marked rotated",
		Tag:     "signing", Response: "JWKS", ContentType: "application/jwk-set+json"},
	{Method: "GET", Path: "/api/objects/{hash}/did.json", Service: "identity-svc", Auth: Public, Cacheable: true,
		Summary: "The object's did:web document (did:web:<host>:api:objects:<hash>): its keys as in jwks.json (the active one authenticates and asserts; rotated ones stay as verification methods), its other hashes' DIDs and box page as alsoKnownAs, and its card, MCP, llm.txt, JWKS and mailbox as services",
		Tag:     "signing", Response: "DIDDocument", ContentType: "application/did+ld+json"},
	{Method: "GET", Path: "/api/objects/{hash}/http-message-signatures-directory", Service: "identity-svc", Auth: Public,
		Summary: "The object's HTTP message signatures directory (Web Bot Auth): the key its signed requests verify with, the answer signed by that key when svc holds it",
		Tag:     "signing", Response: "KeyDirectory", ContentType: "application/http-message-signatures-directory+json"},
	{Method: "GET", Path: "/.well-known/http-message-signatures-directory", Service: "identity-svc", Auth: Public,
		Summary: "svc's own HTTP message signatures directory (Web Bot Auth): the key its webhook deliveries, claim checks, ingest and sync fetches are signed with, the answer signed by it",
		Tag:     "signing", Response: "KeyDirectory", ContentType: "application/http-message-signatures-directory+json"},
	{Method: "GET", Path: "/.well-known/did.json", Service: "identity-svc", Auth: Public,
		Summary: "svc's own did:web document (did:web:<host>): the key of its signed requests and of its agent card, its card, /mcp, llms.txt and key directory as services",
		Tag:     "signing", Response: "DIDDocument", ContentType: "application/did+ld+json"},
	{Method: "GET", Path: "/.well-known/webfinger", Service: "identity-svc", Auth: Public,
		Summary: "WebFinger (RFC 7033) for a public object: its box page, DID document, agent card, signing keys and llm.txt",
		Tag:     "signing", Response: "JRD", ContentType: "application/jrd+json",
		Query: []Param{
			{Name: "resource", Required: true, Schema: Str(), Description: "acct:<hash or custom hash username>@<host>, the object's DID, or its box page or object URL"},
			{Name: "rel", Schema: Str(), Description: "keep only the links of this relation (repeatable)"},
		}},
	{Method: "POST", Path: "/api/objects/{hash}/signing-keys", Service: "identity-svc", Auth: OwnerKey,
		Summary: "Make a new active signing key: the owner's Ed25519 public key (jwk), or without jwk one that svc holds; the previous key is marked rotated",
		Tag:     "signing", Request: "RegisterSigningKey", Status: 201, Response: "SigningKey", Errors: []int{409}},
}

// SigningSchemas are the shapes of the signing routes.
var SigningSchemas = map[string]Schema{
	"JWK": Obj(map[string]Schema{
		"kty": Enum("OKP"), "crv": Enum("Ed25519"), "x": Str(), "kid": Str(), "alg": Enum("EdDSA"), "use": Enum("sig"),
		"status": Enum("active", "rotated"), "held_by": Enum("svc", "owner"), "created_at": DateTime(), "rotated_at": DateTime(),
	}, "kty", "crv", "x", "kid", "alg", "use", "status", "held_by", "created_at"),
	"JWKS": Obj(map[string]Schema{"keys": Arr(Ref("JWK"))}, "keys"),
	"KeyDirectory": Obj(map[string]Schema{"keys": Arr(Obj(map[string]Schema{
		"kty": Enum("OKP"), "crv": Enum("Ed25519"), "x": Str(), "kid": Str(), "alg": Enum("EdDSA"),
	}, "kty", "crv", "x", "kid", "alg"))}, "keys"),
	"JRD": Obj(map[string]Schema{
		"subject": Str(), "aliases": Arr(Str()),
		"links": Arr(Obj(map[string]Schema{"rel": Str(), "type": Str(), "href": Str(), "titles": Schema{"type": "object"}}, "rel", "href")),
	}, "subject", "aliases", "links"),
	"DIDDocument": Obj(map[string]Schema{
		"@context": Arr(Str()), "id": Str(), "alsoKnownAs": Arr(Str()),
		"verificationMethod": Arr(Obj(map[string]Schema{
			"id": Str(), "type": Enum("JsonWebKey2020"), "controller": Str(),
			"publicKeyJwk": Obj(map[string]Schema{"kty": Enum("OKP"), "crv": Enum("Ed25519"), "x": Str(), "kid": Str(), "alg": Enum("EdDSA")}, "kty", "crv", "x", "kid", "alg"),
		}, "id", "type", "controller", "publicKeyJwk")),
		"authentication": Arr(Str()), "assertionMethod": Arr(Str()),
		"service": Arr(Obj(map[string]Schema{"id": Str(), "type": Str(), "serviceEndpoint": Str()}, "id", "type", "serviceEndpoint")),
	}, "@context", "id", "verificationMethod", "authentication", "assertionMethod"),
	"RegisterSigningKey": Schema{"type": "object", "additionalProperties": false, "properties": map[string]any{
		"jwk": Schema{"type": "object", "description": "the owner's public key: {\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"…\"}; omit it to have svc make and hold a new key"},
	}},
	"SigningKey": Obj(map[string]Schema{
		"kid": Str(), "alg": Enum("EdDSA"), "held_by": Enum("svc", "owner"), "created_at": DateTime(),
	}, "kid", "alg", "held_by", "created_at"),
	"MessageSignature": Nullable(Obj(map[string]Schema{
		"jws": Str(), "signed_at": Str(), "nonce": Str(), "thread_id": Nullable(Str()),
	}, "jws", "signed_at", "nonce", "thread_id")),
}
