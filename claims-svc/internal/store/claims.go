package store

import (
	"context"
	"fmt"
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

// listedClaim is a claim on its object's list: the whole claim, which never changes, so that a
// page is one find.
type listedClaim struct {
	Key   string `bson:"_id"`
	Claim Claim  `bson:"claim"`
}

func listKey(objectID, claimID string) string { return mongox.Key(objectID, claimID) }

// InsertClaim stores a new claim and puts it on its object's list (claim ids are ULIDs, so the
// list is in the order of creation).
func (s *Store) InsertClaim(ctx context.Context, c *Claim) error {
	if err := mongox.Insert(ctx, s.c(Claims), c); err != nil {
		return err
	}
	return s.listClaim(ctx, c)
}

// listClaim puts a stored claim on its object's list; listing it again is a no-op.
func (s *Store) listClaim(ctx context.Context, c *Claim) error {
	if err := mongox.InsertOnce(ctx, s.c(ClaimLists), listedClaim{Key: listKey(c.ObjectID, c.ID), Claim: *c}); err != nil {
		return fmt.Errorf("list claim: %w", err)
	}
	return nil
}

// Claim reads a claim; mongox.ErrNotFound if there is none.
func (s *Store) Claim(ctx context.Context, id string) (*Claim, error) {
	var c Claim
	if err := mongox.FindOne(ctx, s.c(Claims), mongox.ByID(id), &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// ClaimsPage reads up to limit of an object's claims, oldest first, after the claim after ("":
// from the first), and the id to continue after ("" when none is left): one find.
func (s *Store) ClaimsPage(ctx context.Context, objectID, after string, limit int) ([]Claim, string, error) {
	r := mongox.Range{Scope: mongox.Scope(objectID), Limit: limit + 1}
	if after != "" {
		if !mongox.KeyPart(after) {
			return nil, "", fmt.Errorf("read claims of %s: %w", objectID, mongox.ErrBadKeyPart)
		}
		r.After = listKey(objectID, after)
	}
	docs, err := mongox.Find[listedClaim](ctx, s.c(ClaimLists), r)
	if err != nil {
		return nil, "", fmt.Errorf("read claims of %s: %w", objectID, err)
	}
	next := ""
	if len(docs) > limit {
		docs = docs[:limit]
		next = docs[limit-1].Claim.ID
	}
	out := make([]Claim, len(docs))
	for i, d := range docs {
		out[i] = d.Claim
	}
	return out, next, nil
}

// place is one taken place of an object's claims quota.
type place struct {
	Key     string `bson:"_id"`
	ClaimID string `bson:"claim_id"`
}

// TakePlace takes a place of objectID's claims quota of max places for claimID, and reports
// false when all are taken. The places are inserts of the numbers 1 to max, so concurrent
// creates never pass the quota: one bounded read of the taken places, then an insert at the
// first free one (the next one when another create took it meanwhile).
func (s *Store) TakePlace(ctx context.Context, objectID, claimID string, max int) (bool, error) {
	// Bounded by the quota: at most max places exist per object.
	taken, err := mongox.Find[place](ctx, s.c(Places), mongox.Range{Scope: mongox.Scope(objectID), Limit: max})
	if err != nil {
		return false, fmt.Errorf("read claim places: %w", err)
	}
	for n := len(taken) + 1; n <= max; n++ {
		err := mongox.Insert(ctx, s.c(Places), place{Key: mongox.Key(objectID, mongox.Seq(int64(n))), ClaimID: claimID})
		if err == nil {
			return true, nil
		}
		if err != ErrTaken {
			return false, fmt.Errorf("take a claim place: %w", err)
		}
	}
	return false, nil
}
