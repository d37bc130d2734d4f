package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// MaxShownClaims bounds the verified claims kept per object for its box page: the page shows a
// badge each, and an object's claims are few (claims-svc's quota); the newest win.
const MaxShownClaims = 12

// Claim is a verified ownership claim as claims-svc's events last reported it.
type Claim struct {
	ID         string    `bson:"id"`
	ProofType  string    `bson:"proof_type"`
	Target     string    `bson:"target"`
	VerifiedAt time.Time `bson:"verified_at"`
}

// claimSet is one object's verified claims, in one document so that the box page reads them with
// one point read. Only the object's partition's consumer writes it, in event order.
type claimSet struct {
	ObjectID string  `bson:"_id"`
	Claims   []Claim `bson:"claims"`
}

// VerifiedClaims returns an object's verified claims, newest first.
func (s *Store) VerifiedClaims(ctx context.Context, objectID string) ([]Claim, error) {
	var set claimSet
	if _, err := s.find(ctx, Claims, objectID, &set); err != nil {
		return nil, fmt.Errorf("store claims: %w", err)
	}
	return set.Claims, nil
}

// SetClaim records a claim as verified (verified true) or lapsed (false). Replaying an event
// rewrites the same set.
func (s *Store) SetClaim(ctx context.Context, objectID string, c Claim, verified bool) error {
	claims, err := s.VerifiedClaims(ctx, objectID)
	if err != nil {
		return err
	}
	claims = slices.DeleteFunc(claims, func(x Claim) bool { return x.ID == c.ID })
	if verified {
		claims = append(claims, c)
	}
	slices.SortStableFunc(claims, func(a, b Claim) int { return b.VerifiedAt.Compare(a.VerifiedAt) })
	if len(claims) > MaxShownClaims {
		claims = claims[:MaxShownClaims]
	}
	set := claimSet{ObjectID: objectID, Claims: claims}
	if err := mongox.ReplaceUpsert(ctx, s.c(Claims), objectID, set); err != nil {
		return fmt.Errorf("store claims: %w", err)
	}
	return nil
}
