package routes

import "github.com/svcdev/svc/pkg/contract"

// Identity are identity-svc's routes.
var Identity = []Route{
	{Method: "POST", Path: "/api/objects", Service: "identity-svc", Auth: Public, Ingress: true, Backpressure: true,
		Summary: "Create an object; its owner API key is returned once", Tag: "objects",
		Request: "CreateObject", Status: 201, Response: "CreatedObject", Errors: []int{409}},
	{Method: "GET", Path: "/api/objects/{hash}", Service: "identity-svc", Auth: Public, Cacheable: true,
		Summary: "Read an object", Tag: "objects", Response: "Object"},
	{Method: "POST", Path: "/api/objects/{hash}/rotate-key", Service: "identity-svc", Auth: OwnerKey,
		Summary: "Rotate the owner key; the presented key stops working", Tag: "keys", Response: "RotatedKey"},
	{Method: "POST", Path: "/api/objects/claim-custom-hash", Service: "identity-svc", Auth: OwnerKey,
		Summary: "Replace the caller's hash by svc_<username>", Tag: "objects",
		Request: "ClaimCustomHash", Response: "CustomHash", Errors: []int{402, 409}},
	{Method: "GET", Path: "/api/directory", Service: "identity-svc", Auth: Public,
		Summary: "List public objects, newest first", Tag: "objects", Response: "Directory",
		Query: append([]Param{
			{Name: "q", Schema: StrMax(200), Description: "substring of the hash or profile title"},
			{Name: "status", Schema: Enum("verified", "unclaimed")},
		}, Paging...)},
	{Method: "GET", Path: "/api/whoami", Service: "identity-svc", Auth: Owner,
		Summary: "Who the presented key is: its object's hash and state, the key's id and scopes", Tag: "keys", Response: "Whoami"},
	{Method: "POST", Path: "/api/objects/{hash}/keys", Service: "identity-svc", Auth: OwnerKey,
		Summary: "Create a scoped sub-key (ksvc_), shown once; at most 50 active per object", Tag: "keys",
		Request: "CreateKey", Status: 201, Response: "CreatedKey", Errors: []int{409}},
	{Method: "GET", Path: "/api/objects/{hash}/keys", Service: "identity-svc", Auth: OwnerKey,
		Summary: "List active sub-keys, newest first", Tag: "keys", Response: "KeyList", Query: Paging},
	{Method: "DELETE", Path: "/api/objects/{hash}/keys/{keyId}", Service: "identity-svc", Auth: OwnerKey,
		Summary: "Revoke a sub-key", Tag: "keys", Response: "RevokedKey"},
	{Method: "GET", Path: "/api/objects/{hash}/svc-associations", Service: "identity-svc", Auth: Owner,
		Summary: "List related objects, newest first", Tag: "associations", Response: "AssociationList", Query: Paging},
	{Method: "POST", Path: "/api/objects/{hash}/svc-associations", Service: "identity-svc", Auth: Owner,
		Summary: "Relate another object", Tag: "associations", Request: "CreateAssociation", Status: 201, Response: "Association"},
	{Method: "DELETE", Path: "/api/objects/{hash}/svc-associations/{id}", Service: "identity-svc", Auth: Owner,
		Summary: "Remove a related object", Tag: "associations", Response: "DeletedAssociation"},
}

var (
	keyScopes = Arr(Enum("read", "write", "mailbox"))
	// objectVisibility is the spec's "Object visibility", from its one declaration.
	objectVisibility = Enum(string(contract.Public), string(contract.Private))
)

// IdentitySchemas are the shapes of identity-svc's routes.
var IdentitySchemas = map[string]Schema{
	"CreateObject": Schema{"type": "object", "additionalProperties": false, "properties": map[string]any{
		"initial_llm_txt": StrMax(256 << 10), "rules": Ref("Rules"), "visibility": objectVisibility,
	}},
	"CreatedObject": Obj(map[string]Schema{
		"hash": Str(), "api_key": Schema{"type": "string", "pattern": "^svc_sk_"}, "mailbox_status": Enum("unclaimed", "claimed"),
		"visibility": objectVisibility, "version": Int(), "created_at": DateTime(),
	}, "hash", "api_key", "mailbox_status", "created_at"),
	"Object": Obj(map[string]Schema{
		"hash": Str(), "mailbox_status": Enum("unclaimed", "claimed"), "visibility": objectVisibility,
		"version": Int(), "created_at": DateTime(), "updated_at": DateTime(),
	}, "hash", "mailbox_status", "version", "created_at", "updated_at"),
	"RotatedKey": Obj(map[string]Schema{
		"hash": Str(), "api_key": Schema{"type": "string", "pattern": "^svc_sk_"}, "key_id": Str(), "rotated_at": DateTime(),
	}, "hash", "api_key"),
	"ClaimCustomHash": Schema{"type": "object", "additionalProperties": false, "required": []string{"username"},
		"properties": map[string]any{
			"username":          Schema{"type": "string", "pattern": "^[a-z0-9_]{3,32}$"},
			"payment_reference": Str(),
		}},
	"CustomHash": Obj(map[string]Schema{
		"hash": Str(), "previous_hash": Str(), "username": Str(), "paid": Bool(),
	}, "hash", "previous_hash", "username", "paid"),
	"Directory": Obj(map[string]Schema{
		"objects": Arr(Obj(map[string]Schema{
			"hash": Str(), "mailbox_status": Enum("unclaimed", "claimed"), "title": Str(), "created_at": DateTime(),
		}, "hash", "mailbox_status", "title", "created_at")),
		"next_cursor": Nullable(Str()),
	}, "objects", "next_cursor"),
	"CreateKey": Schema{"type": "object", "additionalProperties": false, "properties": map[string]any{
		"label": StrMax(200), "scopes": keyScopes,
	}},
	"CreatedKey": Obj(map[string]Schema{
		"id": Str(), "label": Str(), "scopes": keyScopes, "key": Schema{"type": "string", "pattern": "^ksvc_"},
		"prefix": Str(), "created_at": DateTime(), "last_used_at": Nullable(DateTime()),
	}, "id", "label", "scopes", "key", "created_at"),
	"KeyList": Obj(map[string]Schema{
		"keys": Arr(Obj(map[string]Schema{
			"id": Str(), "label": Str(), "scopes": keyScopes, "prefix": Str(),
			"created_at": DateTime(), "last_used_at": Nullable(DateTime()),
		}, "id", "label", "scopes", "prefix", "created_at", "last_used_at")),
		"next_cursor": Nullable(Str()),
	}, "keys", "next_cursor"),
	"Whoami": Obj(map[string]Schema{
		"hash": Str(), "key_id": Str(), "owner_key": Bool(), "scopes": keyScopes,
		"mailbox_status": Enum("unclaimed", "claimed"), "visibility": objectVisibility, "version": Int(),
	}, "hash", "key_id", "owner_key", "scopes", "mailbox_status", "visibility", "version"),
	"RevokedKey": Obj(map[string]Schema{"ok": Bool(), "revoked": Str()}, "ok", "revoked"),
	"CreateAssociation": Schema{"type": "object", "additionalProperties": false, "required": []string{"peer_hash"},
		"properties": map[string]any{"peer_hash": Str(), "role": StrMax(200), "label": StrMax(200)}},
	"Association": Obj(map[string]Schema{
		"id": Str(), "peer_hash": Str(), "role": Str(), "label": Str(), "created_at": DateTime(),
	}, "id", "peer_hash", "role", "label"),
	"AssociationList": Obj(map[string]Schema{"associations": Arr(Ref("Association")), "next_cursor": Nullable(Str())},
		"associations", "next_cursor"),
	"DeletedAssociation": Obj(map[string]Schema{"ok": Bool(), "deleted": Str()}, "ok", "deleted"),
}
