package store

import (
	"context"
	"errors"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// Association is a related object.
type Association struct {
	ID        string    `bson:"_id"`
	ObjectID  string    `bson:"object_id"`
	PeerHash  string    `bson:"peer_hash"`
	Role      string    `bson:"role"`
	Label     string    `bson:"label"`
	CreatedAt time.Time `bson:"created_at"`
	Events    []string  `bson:"_events,omitempty"`
	// Listed says the association was written by a release that lists associations as it
	// stores them; the backfill lists those written before (backfill.go).
	Listed bool `bson:"listed,omitempty"`
}

// InsertAssociation stores an association and puts it into its object's associations list; if
// that fails, the association is removed again (with its staged event) and the error
// returned, so that no stored association is missing from the list.
func (s *Store) InsertAssociation(ctx context.Context, a *Association) error {
	a.Listed = true
	if err := s.insert(ctx, Associations, a); err != nil {
		return err
	}
	return s.listOrUndo(ctx, associationKey(a), listedAssociation(a), Associations, a.ID)
}

// associationKey is the key of an association in its object's list.
func associationKey(a *Association) string {
	return mongox.Key(a.ObjectID, associationsPart, mongox.IDPart(a.ID))
}

// listedAssociation is what an associations list entry holds: the association without its
// events (an association never changes once stored).
func listedAssociation(a *Association) Association {
	l := *a
	l.Events, l.Listed = nil, false
	return l
}

// AssociationDeletions holds one document per deleted association. A deletion is an insert: the
// association document stays, so that an event still in its outbox is published, and of two
// concurrent deletions only one succeeds.
const AssociationDeletions = "association_deletions"

// Associations lists a page of an object's associations that are not deleted, newest first, and
// the id to page on from ("" on the last): one find of the list, then one find of the deletions
// of each chunk of it. Deleted ones are skipped within the page's budget.
func (s *Store) Associations(ctx context.Context, objectID string, p Page) ([]Association, string, error) {
	return readPage(ctx, s, []string{objectID, associationsPart}, p, func(a Association) string { return a.ID },
		func(ctx context.Context, chunk []Association) ([]*Association, error) {
			gone, err := existing(ctx, s, AssociationDeletions, chunk, func(a Association) string { return a.ID })
			if err != nil {
				return nil, err
			}
			out := make([]*Association, len(chunk))
			for i := range chunk {
				if !gone[chunk[i].ID] {
					out[i] = &chunk[i]
				}
			}
			return out, nil
		})
}

// DeleteAssociation deletes an association of objectID; mongox.ErrNotFound if there is none or
// it is already deleted.
func (s *Store) DeleteAssociation(ctx context.Context, objectID, id string, at time.Time) error {
	var a Association
	err := s.one(ctx, Associations, bson.D{{Key: "_id", Value: id}, {Key: "object_id", Value: objectID}}, &a,
		options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return err
	}
	err = s.insert(ctx, AssociationDeletions, bson.D{{Key: "_id", Value: id}, {Key: "object_id", Value: objectID}, {Key: "deleted_at", Value: at}})
	if errors.Is(err, ErrTaken) {
		return mongox.ErrNotFound
	}
	return err
}
