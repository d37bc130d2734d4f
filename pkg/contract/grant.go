package contract

// GrantKeyRequest asks identity-svc for the sub-key of an OAuth grant (POST
// /internal/v1/objects/{id}/grant-keys): its label (the client's name) and scopes, and the key id
// of the owner's key that approved it, for the records.
type GrantKeyRequest struct {
	Label      string   `json:"label"`
	Scopes     []string `json:"scopes"`
	ApprovedBy string   `json:"approved_by"`
}

// GrantKey is the sub-key made for a grant: its id and its digest (the key itself is never
// answered; the gateway's access tokens name the digest).
type GrantKey struct {
	KeyID  string   `json:"key_id"`
	Digest string   `json:"digest"`
	Scopes []string `json:"scopes"`
}
