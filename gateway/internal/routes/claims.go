package routes

// Claims are claims-svc's routes.
var Claims = []Route{
	{Method: "POST", Path: "/api/claims", Service: "claims-svc", Auth: Owner,
		Summary: "Claim ownership of a domain, page, website or social profile for an object; answers the challenge to place as proof",
		Tag:     "claims", Request: "CreateClaim", Status: 201, Response: "Claim", Errors: []int{409}},
	{Method: "GET", Path: "/api/claims/{claimId}", Service: "claims-svc", Auth: Owner,
		Summary: "Read a claim: its status, challenge, last check and evidence", Tag: "claims", Response: "Claim"},
	{Method: "POST", Path: "/api/claims/{claimId}/verify", Service: "claims-svc", Auth: Owner,
		Summary: "Look at the claim's proof now: verifies a pending claim, re-checks a verified one", Tag: "claims",
		Response: "ClaimVerification"},
	{Method: "GET", Path: "/api/objects/{hash}/claims", Service: "claims-svc", Auth: Owner,
		Summary: "List the object's claims, oldest first", Tag: "claims", Response: "ClaimList", Query: Paging},
}

var (
	proofType   = Enum("domain", "meta_tag", "website", "github", "x", "linkedin", "reddit", "mastodon")
	claimStatus = Enum("pending", "verified", "lapsed", "expired")
)

// ClaimsSchemas are the shapes of claims-svc's routes.
var ClaimsSchemas = map[string]Schema{
	"CreateClaim": Schema{"type": "object", "additionalProperties": false,
		"required": []string{"object_hash", "proof_type", "claimed_target"},
		"properties": map[string]any{
			"object_hash": Str(), "proof_type": Str(),
			"claimed_target": Schema{"type": "string", "maxLength": 2048,
				"description": "a domain (domain), a page URL (meta_tag), a site URL or domain (website), or a handle or profile URL (github, x, linkedin, mastodon)"},
		}},
	"ClaimChallenge": Obj(map[string]Schema{"token": Str(), "instructions": Str(), "expires_at": DateTime()},
		"token", "instructions", "expires_at"),
	"ClaimCheck": Obj(map[string]Schema{
		"outcome": Enum("match", "mismatch", "unreachable"), "reason": Nullable(Str()), "evidence": Nullable(Str()),
		"checked_at": DateTime(),
	}, "outcome", "reason", "evidence", "checked_at"),
	"Claim": Obj(map[string]Schema{
		"id": Str(), "object_hash": Str(), "proof_type": proofType, "claimed_target": Str(), "status": claimStatus,
		"challenge": Ref("ClaimChallenge"), "created_at": DateTime(), "verified_at": Nullable(DateTime()),
		"last_checked_at": Nullable(DateTime()), "last_check": Nullable(Ref("ClaimCheck")),
	}, "id", "object_hash", "proof_type", "claimed_target", "status", "challenge", "created_at", "verified_at",
		"last_checked_at", "last_check"),
	"ClaimList": Obj(map[string]Schema{"claims": Arr(Ref("Claim")), "next_cursor": Nullable(Str())}, "claims", "next_cursor"),
	"ClaimVerification": Obj(map[string]Schema{
		"id": Str(), "status": Enum("verified", "failed"), "verified_at": Nullable(DateTime()), "reason": Nullable(Str()),
		"claim_status": claimStatus, "checked_at": Nullable(DateTime()), "evidence": Nullable(Str()),
	}, "id", "status", "verified_at", "reason", "claim_status", "checked_at", "evidence"),
}
