package object

import (
	"context"

	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/events"
)

// NewAssociation is what an association creation asks for.
type NewAssociation struct {
	PeerHash string
	Role     string
	Label    string
}

// Associate records that the caller's object relates to a peer object.
func (s *Service) Associate(ctx context.Context, requestID string, c Caller, in NewAssociation) (*store.Association, error) {
	if in.PeerHash == "" {
		return nil, apierr.MissingField("peer_hash")
	}
	if len(in.Role) > MaxLabel || len(in.Label) > MaxLabel {
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "role and label are at most %d characters", MaxLabel)
	}
	if !apikey.ValidHash(in.PeerHash) {
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "peer_hash is not an object hash")
	}
	peer, err := s.Read(ctx, in.PeerHash, c.ObjectID)
	if err != nil {
		return nil, notFound(err, "peer object")
	}
	a := &store.Association{ID: apikey.NewID("asc"), ObjectID: c.ObjectID, PeerHash: peer.Hash, Role: in.Role, Label: in.Label, CreatedAt: clock.Now()}
	ev := associationCreated(a, c.Hash, requestID)
	a.Events = events.IDs(ev)
	if err := s.Outbox.Stage(ctx, store.Associations, a.ID, ev); err != nil {
		return nil, err
	}
	if err := s.Store.InsertAssociation(ctx, a); err != nil {
		return nil, err
	}
	s.Outbox.Confirm(ev)
	return a, nil
}

// AssociationsScope is the scope of the cursors of an object's associations list
// (httpx.SeqCursor).
func AssociationsScope(objectID string) string { return "associations:" + objectID }

// Associations lists a page of the object's associations, newest first, and the id to page on
// from ("" on the last).
func (s *Service) Associations(ctx context.Context, objectID string, p store.Page) ([]store.Association, string, error) {
	return s.Store.Associations(ctx, objectID, p)
}

// Dissociate deletes an association of the caller's object.
func (s *Service) Dissociate(ctx context.Context, c Caller, id string) error {
	return notFound(s.Store.DeleteAssociation(ctx, c.ObjectID, id, clock.Now()), "association")
}
