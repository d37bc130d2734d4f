package store

import (
	"context"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// Claim is a claim as created: it never changes afterwards.
type Claim struct {
	ID         string `bson:"_id"`
	ObjectID   string `bson:"object_id"`
	ObjectHash string `bson:"object_hash"`
	ProofType  string `bson:"proof_type"`
	// ClaimedTarget is the target as the owner sent it; Subject is what is checked: the domain,
	// the page URL, or the handle of a social network (Host: a Mastodon instance).
	ClaimedTarget string    `bson:"claimed_target"`
	Subject       string    `bson:"subject"`
	Host          string    `bson:"host,omitempty"`
	Token         string    `bson:"token"`
	CreatedAt     time.Time `bson:"created_at"`
	ExpiresAt     time.Time `bson:"expires_at"`
}

// InsertClaim stores a new claim.
func (s *Store) InsertClaim(ctx context.Context, c *Claim) error { return s.insert(ctx, Claims, c) }

// Claim reads a claim; mongox.ErrNotFound if there is none.
func (s *Store) Claim(ctx context.Context, id string) (*Claim, error) {
	var c Claim
	if err := mongox.FindOne(ctx, s.c(Claims), mongox.ByID(id), &c); err != nil {
		return nil, err
	}
	return &c, nil
}
