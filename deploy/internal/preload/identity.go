package preload

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
)

// Object is an object for Objects: its profile text, whether it is private, and whether it holds
// a verified claim.
type Object struct {
	InitialLLMTxt string
	Private       bool
	Verified      bool
}

// PreloadedObject is a preloaded object's id, hash and owner key.
type PreloadedObject struct {
	ObjectID, Hash, APIKey string
}

// Objects stores objects in identity-svc's database db as creation stores them (the hash record,
// the object, its owner key and the key's id record, and a public object's directory entry) and,
// for those Verified, a verified claim as claims-svc's event records it (the claim fact and its
// entry in the object's claims list), one insert per collection. It writes no events and no
// signing keys (those are made when first needed).
func Objects(ctx context.Context, db *mongo.Database, in []Object) ([]PreloadedObject, error) {
	out := make([]PreloadedObject, len(in))
	var hashes, objects, keyIDs, keys, ranges, facts []any
	now := clock.Now()
	for i, p := range in {
		id, hash := apikey.NewID("obj"), apikey.NewHash()
		visibility := "public"
		if p.Private {
			visibility = "private"
		}
		key, digest := apikey.Generate(apikey.OwnerPrefix)
		keyID := apikey.NewID("key")
		hashes = append(hashes, bson.D{{Key: "_id", Value: hash}, {Key: "object_id", Value: id}})
		objects = append(objects, bson.D{{Key: "_id", Value: id}, {Key: "hash", Value: hash}, {Key: "hashes", Value: bson.A{hash}},
			{Key: "visibility", Value: visibility}, {Key: "mailbox_status", Value: "unclaimed"}, {Key: "version", Value: 1},
			{Key: "title", Value: contract.ProfileTitle(p.InitialLLMTxt)}, {Key: "initial_llm_txt", Value: p.InitialLLMTxt},
			{Key: "rules", Value: nil}, {Key: "created_at", Value: now}, {Key: "updated_at", Value: now}, {Key: "listed", Value: true}})
		keyIDs = append(keyIDs, bson.D{{Key: "_id", Value: keyID}, {Key: "digest", Value: digest}})
		keys = append(keys, bson.D{{Key: "_id", Value: digest}, {Key: "key_id", Value: keyID}, {Key: "object_id", Value: id},
			{Key: "owner", Value: true}, {Key: "label", Value: "owner"}, {Key: "scopes", Value: bson.A{contract.ScopeRead, contract.ScopeWrite, contract.ScopeMailbox}},
			{Key: "prefix", Value: apikey.DisplayPrefix(key)}, {Key: "created_at", Value: now}, {Key: "listed", Value: true}})
		if !p.Private {
			ranges = append(ranges, bson.D{{Key: "_id", Value: mongox.Key("directory", mongox.IDPart(id))}, {Key: "v", Value: bson.D{{Key: "object_id", Value: id}}}})
		}
		if p.Verified {
			claimID, at := apikey.NewID("clm"), now.Add(time.Second)
			factID := id + "/claim/" + claimID + "/" + at.UTC().Format(time.RFC3339Nano)
			fact := bson.D{{Key: "_id", Value: factID}, {Key: "object_id", Value: id},
				{Key: "kind", Value: "claim"}, {Key: "seq", Value: 0},
				{Key: "claim", Value: bson.D{{Key: "network", Value: "dns"}, {Key: "handle", Value: ""}, {Key: "claim_id", Value: claimID}}}, {Key: "at", Value: at}}
			facts = append(facts, fact)
			ranges = append(ranges, bson.D{{Key: "_id", Value: mongox.Key(id, "claims", mongox.Time(at), mongox.IDPart(factID))}, {Key: "v", Value: fact}})
		}
		out[i] = PreloadedObject{ObjectID: id, Hash: hash, APIKey: key}
	}
	return out, insertAll(ctx, db, map[string][]any{"object_ranges": ranges, "hashes": hashes, "objects": objects,
		"key_ids": keyIDs, "keys": keys, "facts": facts})
}
