package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"golang.org/x/sync/errgroup"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
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
	// factProfileHead marks the profile head hint (profileHeadID), which is not a fact.
	factProfileHead = "profile_head"
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
// version is the highest reported, so it never goes backwards; the version keptProfiles below it
// is pruned (a point delete: versions come one by one, so each report prunes the one that fell
// out of the margin). The version goes into the versions' range before the facts: a reader that
// finds the range empty steps through the facts (headProfile), and whatever it finds there is
// then already in the range that later reads take, so no later read sees a lower version.
func (s *Store) UpdateProfile(ctx context.Context, id string, version int, title string, at time.Time) error {
	err := s.insert(ctx, ProfileVersions, fact{ID: profileVersionID(id, version), ObjectID: id, Kind: factProfile,
		Seq: version, Title: title, At: at})
	if err != nil && !errors.Is(err, ErrTaken) { // ErrTaken: the same version reported again
		return err
	}
	err = s.insert(ctx, Facts, fact{ID: factID(id, factProfile, version), ObjectID: id, Kind: factProfile,
		Seq: version, Title: title, At: at})
	if err != nil && !errors.Is(err, ErrTaken) {
		return err
	}
	if old := version - keptProfiles - 1; old > 1 {
		if _, err := s.deleteOne(ctx, Facts, mongox.ByID(factID(id, factProfile, old))); err != nil {
			return fmt.Errorf("prune profile versions: %w", err)
		}
		if _, err := s.deleteOne(ctx, ProfileVersions, mongox.ByID(profileVersionID(id, old))); err != nil {
			return fmt.Errorf("prune profile versions: %w", err)
		}
	}
	return nil
}

// profileVersionID is the data key of an object's profile version: the object's versions are one
// _id range, in version order.
func profileVersionID(objectID string, version int) string {
	return mongox.Key("profile", objectID, mongox.Seq(int64(version)))
}

// RecordClaim records a verified claim: the mailbox is claimed, and a social handle (if any)
// is the object's. It is idempotent per claim id.
func (s *Store) RecordClaim(ctx context.Context, id string, h SocialHandle, at time.Time) error {
	return s.recordClaimFact(ctx, fact{ID: factID(id, factClaim, h.ClaimID+"/"+at.UTC().Format(time.RFC3339Nano)),
		ObjectID: id, Kind: factClaim, Claim: &h, At: at})
}

// RecordLapse records that verified claim claimID lapsed. It is idempotent per claim id.
func (s *Store) RecordLapse(ctx context.Context, id, claimID string, at time.Time) error {
	return s.recordClaimFact(ctx, fact{ID: factID(id, factLapse, claimID+"/"+at.UTC().Format(time.RFC3339Nano)),
		ObjectID: id, Kind: factLapse, ClaimID: claimID, At: at})
}

// recordClaimFact inserts a claim fact and puts it into the object's claims list, once per fact
// id: a redelivered event adds nothing, and one whose first delivery stopped between the two
// writes completes it.
func (s *Store) recordClaimFact(ctx context.Context, f fact) error {
	if err := s.insert(ctx, Facts, f); err != nil && !errors.Is(err, ErrTaken) {
		return err
	}
	return s.listClaimFact(ctx, f)
}

// listClaimFact puts a claim fact into its object's claims list, under when it happened.
func (s *Store) listClaimFact(ctx context.Context, f fact) error {
	f.Events = nil
	if err := s.putEntry(ctx, mongox.Key(f.ObjectID, claimsPart, mongox.Time(f.At), mongox.IDPart(f.ID)), f); err != nil {
		return fmt.Errorf("list claim fact: %w", err)
	}
	return nil
}

// fold reads o's facts and applies them. Each kind is read by point reads on _id, whatever
// the collection holds: hash changes and signing keys are numbered from 1 without gaps, so they
// are read up to the first number not stored; the profile from its head hint upwards
// (latestProfile); claims and lapses from the object's claims list. The kinds are read at once.
func (s *Store) fold(ctx context.Context, o *Object) error {
	var hashes, sigkeys, claims []fact
	var profile *fact
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { hashes, err = s.numbered(gctx, o.ID, factHash, 1); return err })
	g.Go(func() (err error) { sigkeys, err = s.numbered(gctx, o.ID, factSigKey, 1); return err })
	g.Go(func() (err error) { profile, err = s.latestProfile(gctx, o); return err })
	g.Go(func() (err error) { claims, err = s.claimFacts(gctx, o.ID); return err })
	if err := g.Wait(); err != nil {
		return fmt.Errorf("fold %s: %w", o.ID, err)
	}
	facts := slices.Concat(hashes, sigkeys, claims)
	if profile != nil {
		facts = append(facts, *profile)
	}
	slices.SortStableFunc(facts, func(a, b fact) int { return a.Seq - b.Seq })
	// The latest verification and lapse of each claim.
	verified, lapsed := map[string]time.Time{}, map[string]time.Time{}
	for _, f := range facts {
		switch {
		case f.Kind == factLapse && f.At.After(lapsed[f.ClaimID]):
			lapsed[f.ClaimID] = f.At
		case f.Kind == factClaim && f.Claim != nil && !f.At.Before(verified[f.Claim.ClaimID]):
			verified[f.Claim.ClaimID] = f.At
		}
	}
	live := false // the object holds a claim that counts
	for _, f := range facts {
		if f.Kind == factClaim && f.Claim != nil {
			at, last := lapsed[f.Claim.ClaimID]
			if !f.At.Equal(verified[f.Claim.ClaimID]) || (last && !f.At.After(at)) {
				f.Kind = factLapse // an earlier verification, or one lapsed since: it no longer counts
			} else {
				live = true
			}
		}
		o.apply(f)
	}
	if o.lapses && !live {
		o.MailboxStatus = StatusUnclaimed
	}
	return nil
}

// numbered reads the facts of kind numbered from, from+1, … of an object, up to the first one not
// stored.
func (s *Store) numbered(ctx context.Context, objectID, kind string, from int) ([]fact, error) {
	var out []fact
	for n := from; ; n++ {
		var f fact
		err := s.one(ctx, Facts, mongox.ByID(factID(objectID, kind, n)), &f)
		if errors.Is(err, mongox.ErrNotFound) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
}

// profileHeadID is the id of an object's profile head: a hint of the highest profile version
// reported, raised after each report. Concurrent reports may leave it behind (an update on
// FerretDB is read-then-rewrite), so a reader steps upwards from it to the first version not
// stored.
func profileHeadID(objectID string) string { return factID(objectID, factProfile, "head") }

// profileHead is the document of profileHeadID.
type profileHead struct {
	ID       string `bson:"_id"`
	ObjectID string `bson:"object_id"`
	Kind     string `bson:"kind"`
	Seq      int    `bson:"seq"`
}

// raiseProfileHead moves the object's profile head up to version.
func (s *Store) raiseProfileHead(ctx context.Context, objectID string, version int) error {
	err := mongox.Upsert(ctx, s.db.Collection(Facts), profileHeadID(objectID),
		bson.D{{Key: "$max", Value: bson.D{{Key: "seq", Value: version}}},
			{Key: "$setOnInsert", Value: bson.D{{Key: "object_id", Value: objectID}, {Key: "kind", Value: factProfileHead}}}})
	if err != nil {
		return fmt.Errorf("raise profile head: %w", err)
	}
	return nil
}

// latestProfile reads the highest profile version reported of o (nil: none since creation): one
// read of the newest key of its versions' range. Versions are only ever added, so a reader never
// sees one lower than a read before it found, whatever order concurrent reports land in.
func (s *Store) latestProfile(ctx context.Context, o *Object) (*fact, error) {
	newest, err := mongox.Find[fact](ctx, s.db.Collection(ProfileVersions),
		mongox.Range{Scope: mongox.Scope("profile", o.ID), Desc: true, Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("store profile versions: %w", err)
	}
	if len(newest) == 1 {
		return &newest[0], nil
	}
	return s.headProfile(ctx, o)
}

// headProfile finds the highest profile version of an object no version of which was reported
// since profile versions became a range: the head hint of the earlier release, then the versions
// above it until one is not stored.
func (s *Store) headProfile(ctx context.Context, o *Object) (*fact, error) {
	var head profileHead
	if err := s.one(ctx, Facts, mongox.ByID(profileHeadID(o.ID)), &head); err != nil && !errors.Is(err, mongox.ErrNotFound) {
		return nil, err
	}
	var latest *fact
	v := max(head.Seq, o.Version)
	if v > o.Version {
		latest = &fact{}
		if err := s.one(ctx, Facts, mongox.ByID(factID(o.ID, factProfile, v)), latest); err != nil {
			if !errors.Is(err, mongox.ErrNotFound) {
				return nil, err
			}
			latest = nil
		}
	}
	above, err := s.numbered(ctx, o.ID, factProfile, v+1)
	if err != nil {
		return nil, err
	}
	if len(above) > 0 {
		return &above[len(above)-1], nil
	}
	return latest, nil
}

// maxClaimFacts bounds the claim facts (verifications and lapses) an object's fold reads: its
// newest ones. A claim changes state only when claims-svc checks it and finds it changed.
const maxClaimFacts = 256

// claimFacts reads the newest claim facts of an object from its claims list: one find.
func (s *Store) claimFacts(ctx context.Context, objectID string) ([]fact, error) {
	entries, err := mongox.Find[entry[fact]](ctx, s.db.Collection(Ranges),
		mongox.Range{Scope: mongox.Scope(objectID, claimsPart), Desc: true, Limit: maxClaimFacts})
	if err != nil {
		return nil, err
	}
	out := make([]fact, len(entries))
	for i, e := range entries {
		out[len(entries)-1-i] = e.Value // oldest first, as they happened
	}
	return out, nil
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
