package object

import (
	"context"
	"time"

	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
)

// ReportProfile records the version and title of a context write (read-your-writes).
func (s *Service) ReportProfile(ctx context.Context, objectID string, in contract.ProfileUpdate) error {
	at, err := time.Parse(clock.Layout, in.UpdatedAt)
	if err != nil {
		at = clock.Now()
	}
	if err := s.Store.UpdateProfile(ctx, objectID, in.Version, in.Title, at); err != nil {
		return err
	}
	s.ETags.Changed(ctx, objectID)
	return nil
}

// VerifiedClaim is a claim claims-svc verified for an object.
type VerifiedClaim struct {
	ClaimID string
	Network string
	Handle  string // "" if the claim names no social handle
	At      time.Time
}

// RecordClaim marks the object's mailbox as claimed and records the social handle a claim
// verified; it is idempotent. An unknown object is ignored: there is nothing to mark.
func (s *Service) RecordClaim(ctx context.Context, objectID string, c VerifiedClaim) error {
	obj, err := s.Store.Object(ctx, objectID)
	if err != nil {
		return ignoreNotFound(err)
	}
	h := store.SocialHandle{Network: c.Network, Handle: c.Handle, ClaimID: c.ClaimID}
	if err := s.Store.RecordClaim(ctx, obj.ID, h, c.At); err != nil {
		return err
	}
	s.ETags.Changed(ctx, obj.ID)
	// A failure is returned, so that the event is retried until caches show the claimed mailbox.
	return s.forgetHashes(ctx, obj.Hashes...)
}
