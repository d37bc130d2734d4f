package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/events"
)

// Facts is the collection of what happened to an object after its creation: hash changes,
// profile versions, verified claims and their lapses. Each fact is an inserted document, never an update of
// the object document: on FerretDB an update rewrites the whole document, so concurrent updates
// of one object lost each other's writes. A fact's _id makes it unique where it must be:
//
//	<object>/hash/<n>      the n-th hash change; of two concurrent changes only one is stored
//	<object>/profile/<v>   profile version v; a repeated report is a no-op
//	<object>/claim/<id>/<t>  claim id verified at t; a redelivered event is a no-op
//	<object>/lapse/<id>/<t>  claim id lapsed at t; a redelivered event is a no-op
//	<object>/sigkey/<n>    the n-th signing key; it replaces key n-1, which stays for verification
//
// A claim counts while its latest verification is later than its latest lapse (a lapsed claim
// may be verified again), and the mailbox is claimed while a claim counts.
//
// The object is read as its document folded with its facts (fold), so no fact is lost and the
// profile version is the highest reported.
const Facts = "facts"

// Fact kinds.
const (
	factHash    = "hash"
	factProfile = "profile"
	factClaim   = "claim"
	factLapse   = "lapse"
	factSigKey  = "sigkey"
)

// keptProfiles is how many profile versions below the highest are kept when older ones are
// pruned: a margin, so that a reader on MongoDB whose scan overlaps an insert and a prune still
// finds a recent version.
const keptProfiles = 16

type fact struct {
	ID       string        `bson:"_id"`
	ObjectID string        `bson:"object_id"`
	Kind     string        `bson:"kind"`
	Seq      int           `bson:"seq"` // hash-change number or profile version
	Hash     string        `bson:"hash,omitempty"`
	Username string        `bson:"username,omitempty"`
	Title    string        `bson:"title,omitempty"`
	Claim    *SocialHandle `bson:"claim,omitempty"`
	ClaimID  string        `bson:"claim_id,omitempty"` // of a lapse
	SigKey   *SigningKey   `bson:"sigkey,omitempty"`
	At       time.Time     `bson:"at"`
	Events   []string      `bson:"_events,omitempty"`
}

func factID(objectID, kind string, key any) string {
	return fmt.Sprintf("%s/%s/%v", objectID, kind, key)
}

// ChangeHash records that hash (already claimed) is the object's current hash, as the change
// after the one o was read at, with the change's event. ErrTaken if another change was recorded
// since o was read: the caller lost a race and must give the hash back. The fact is the
// document that records the event, which is staged in outbox first.
func (s *Store) ChangeHash(ctx context.Context, o *Object, hash, username string, at time.Time, outbox events.Stager, ev events.Pending) error {
	seq := o.HashSeq + 1
	f := fact{ID: factID(o.ID, factHash, seq), ObjectID: o.ID, Kind: factHash, Seq: seq,
		Hash: hash, Username: username, At: at, Events: events.IDs(ev)}
	if err := outbox.Stage(ctx, Facts, f.ID, ev); err != nil {
		return err
	}
	return s.insert(ctx, Facts, f)
}

// UpdateProfile records the context version and title that context-svc reports. The object's
// version is the highest reported, so it never goes backwards; versions far below it are pruned.
func (s *Store) UpdateProfile(ctx context.Context, id string, version int, title string, at time.Time) error {
	err := s.insert(ctx, Facts, fact{ID: factID(id, factProfile, version), ObjectID: id, Kind: factProfile,
		Seq: version, Title: title, At: at})
	if errors.Is(err, ErrTaken) {
		return nil // the same version reported again
	}
	if err != nil {
		return err
	}
	_, err = s.db.Collection(Facts).DeleteMany(ctx, bson.D{{Key: "object_id", Value: id}, {Key: "kind", Value: factProfile},
		{Key: "seq", Value: bson.D{{Key: "$lt", Value: version - keptProfiles}}}})
	if err != nil {
		return fmt.Errorf("prune profile versions: %w", err)
	}
	return nil
}

// RecordClaim records a verified claim: the mailbox is claimed, and a social handle (if any)
// is the object's. It is idempotent per claim id.
func (s *Store) RecordClaim(ctx context.Context, id string, h SocialHandle, at time.Time) error {
	err := s.insert(ctx, Facts, fact{ID: factID(id, factClaim, h.ClaimID+"/"+at.UTC().Format(time.RFC3339Nano)),
		ObjectID: id, Kind: factClaim, Claim: &h, At: at})
	if errors.Is(err, ErrTaken) {
		return nil
	}
	return err
}

// RecordLapse records that verified claim claimID lapsed. It is idempotent per claim id.
func (s *Store) RecordLapse(ctx context.Context, id, claimID string, at time.Time) error {
	err := s.insert(ctx, Facts, fact{ID: factID(id, factLapse, claimID+"/"+at.UTC().Format(time.RFC3339Nano)),
		ObjectID: id, Kind: factLapse, ClaimID: claimID, At: at})
	if errors.Is(err, ErrTaken) {
		return nil
	}
	return err
}

// fold reads the facts of objs and applies them.
func (s *Store) fold(ctx context.Context, objs []Object) error {
	if len(objs) == 0 {
		return nil
	}
	ids := make([]string, len(objs))
	byID := make(map[string]*Object, len(objs))
	for i := range objs {
		ids[i] = objs[i].ID
		byID[objs[i].ID] = &objs[i]
	}
	var facts []fact
	filter := bson.D{{Key: "object_id", Value: bson.D{{Key: "$in", Value: ids}}}}
	if err := s.all(ctx, Facts, filter, &facts); err != nil {
		return err
	}
	slices.SortFunc(facts, func(a, b fact) int { return a.Seq - b.Seq })
	// The latest verification and lapse of each claim, by <object>/<claim id>.
	verified, lapsed := map[string]time.Time{}, map[string]time.Time{}
	for _, f := range facts {
		switch {
		case f.Kind == factLapse && f.At.After(lapsed[f.ObjectID+"/"+f.ClaimID]):
			lapsed[f.ObjectID+"/"+f.ClaimID] = f.At
		case f.Kind == factClaim && f.Claim != nil && !f.At.Before(verified[f.ObjectID+"/"+f.Claim.ClaimID]):
			verified[f.ObjectID+"/"+f.Claim.ClaimID] = f.At
		}
	}
	live := map[string]bool{} // objects holding a claim that counts
	for _, f := range facts {
		o := byID[f.ObjectID]
		if o == nil {
			continue
		}
		if f.Kind == factClaim && f.Claim != nil {
			key := f.ObjectID + "/" + f.Claim.ClaimID
			at, last := lapsed[key]
			if !f.At.Equal(verified[key]) || (last && !f.At.After(at)) {
				f.Kind = factLapse // an earlier verification, or one lapsed since: it no longer counts
			} else {
				live[f.ObjectID] = true
			}
		}
		o.apply(f)
	}
	for _, o := range byID {
		if o.lapses && !live[o.ID] {
			o.MailboxStatus = StatusUnclaimed
		}
	}
	return nil
}

func (o *Object) apply(f fact) {
	switch f.Kind {
	case factHash:
		o.Hashes = append(o.Hashes, f.Hash)
		if f.Seq > o.HashSeq {
			o.Hash, o.Username, o.HashSeq = f.Hash, f.Username, f.Seq
		}
	case factProfile:
		if f.Seq > o.Version {
			o.Version, o.Title = f.Seq, f.Title
		}
	case factClaim:
		o.MailboxStatus = StatusClaimed
		if f.Claim != nil && f.Claim.Handle != "" {
			o.SocialHandles = append(o.SocialHandles, *f.Claim)
		}
	case factLapse:
		o.lapses = true
	case factSigKey:
		if f.SigKey != nil && f.Seq == len(o.SigningKeys)+1 {
			k := *f.SigKey
			if n := len(o.SigningKeys); n > 0 {
				o.SigningKeys[n-1].RotatedAt = &f.At
			}
			k.CreatedAt = f.At
			o.SigningKeys = append(o.SigningKeys, k)
		}
		return // a new key is not a change of what the object read shows
	}
	if f.At.After(o.UpdatedAt) {
		o.UpdatedAt = f.At
	}
}
