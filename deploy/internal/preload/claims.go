package preload

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/mongox"
)

// Claim is a domain claim of ObjectID for Claims, verified or pending.
type Claim struct {
	ObjectID, ObjectHash, Domain string
	Verified                     bool
}

// Claims stores claims in claims-svc's database db as creates store them (claims-svc's store:
// the claim, its copy on its object's list, its place in the object's quota) and, for a
// verified one, what a verification records without its event: the matching check, the state
// and the entry of the next day's re-check. Every object's claims must come in one call, and the
// object must have none yet.
func Claims(ctx context.Context, db *mongo.Database, claims []Claim) error {
	var docs, listed, places, checks, states, due []any
	placed := map[string]int{}
	now := clock.Now()
	for _, c := range claims {
		id := apikey.NewID("clm")
		placed[c.ObjectID]++
		if placed[c.ObjectID] > 100 {
			return fmt.Errorf("preload: %s past its quota of 100 claims", c.ObjectID)
		}
		doc := bson.D{{Key: "_id", Value: id}, {Key: "object_id", Value: c.ObjectID}, {Key: "object_hash", Value: c.ObjectHash},
			{Key: "proof_type", Value: "domain"}, {Key: "claimed_target", Value: c.Domain}, {Key: "subject", Value: strings.ToLower(c.Domain)},
			{Key: "token", Value: claimToken()}, {Key: "created_at", Value: now}, {Key: "expires_at", Value: now.Add(7 * 24 * time.Hour)}}
		docs = append(docs, doc)
		listed = append(listed, bson.D{{Key: "_id", Value: mongox.Key(c.ObjectID, id)}, {Key: "claim", Value: doc}})
		places = append(places, bson.D{{Key: "_id", Value: mongox.Key(c.ObjectID, mongox.Seq(int64(placed[c.ObjectID])))}, {Key: "claim_id", Value: id}})
		if !c.Verified {
			continue
		}
		checkID := apikey.NewID("chk")
		checks = append(checks, bson.D{{Key: "_id", Value: mongox.Key(id, mongox.Time(now), checkID)}, {Key: "check_id", Value: checkID},
			{Key: "claim_id", Value: id}, {Key: "at", Value: now}, {Key: "outcome", Value: "match"}, {Key: "reason", Value: "preloaded"}})
		states = append(states, bson.D{{Key: "_id", Value: mongox.Key(id, mongox.Seq(1))}, {Key: "claim_id", Value: id},
			{Key: "object_id", Value: c.ObjectID}, {Key: "gen", Value: 1}, {Key: "status", Value: "verified"}, {Key: "at", Value: now},
			{Key: "verified_at", Value: now}, {Key: "_events", Value: nil}})
		next := now.Truncate(24 * time.Hour).Add(24 * time.Hour) // CLAIMS_RECHECK_INTERVAL's default period
		due = append(due, bson.D{{Key: "_id", Value: mongox.Key(mongox.Time(next), id)}, {Key: "claim_id", Value: id}})
	}
	return insertAll(ctx, db, map[string][]any{"claim_places": places, "claims": docs, "claim_lists": listed,
		"claim_checks": checks, "claim_states": states, "claim_due": due})
}

// claimToken is a challenge token as claims-svc makes them.
func claimToken() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}
