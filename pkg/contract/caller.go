package contract

import "slices"

// Scopes of sub-keys. The owner key holds all of them.
const (
	ScopeRead    = "read"
	ScopeWrite   = "write"
	ScopeMailbox = "mailbox"
)

// Principal is the authenticated caller: the object whose key was presented. The gateway carries
// it to the services in its internal token (authn); it is declared here, with no dependencies, so
// that use cases take the one caller type without importing the Gin middleware that reads it.
type Principal struct {
	ObjectID string   `json:"oid"`
	Hash     string   `json:"hash"`
	KeyID    string   `json:"kid"`
	Owner    bool     `json:"owner"` // the owner key itself, not a sub-key
	Scopes   []string `json:"scopes,omitempty"`
}

// HasScope reports whether the principal may act with scope s.
func (p *Principal) HasScope(s string) bool {
	return p != nil && (p.Owner || slices.Contains(p.Scopes, s))
}

// Target is the object named by the route's {hash}, resolved by the gateway.
type Target struct {
	ObjectID   string     `json:"oid"`
	Hash       string     `json:"hash"`
	Visibility Visibility `json:"vis"`
}
