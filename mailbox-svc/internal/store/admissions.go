package store

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
)

// Admission is what mailbox-svc knows of an object's rules for taking a message: its projection
// of the rules context-svc owns, fed by identity-svc's object.created (the rules the object was
// created with) and context-svc's context.updated (the rules of each later version). One
// document per object, read with one point read per send.
type Admission struct {
	ObjectID string `bson:"_id"`
	// Version is the context version the rules are of: an event of an older version changes
	// nothing, whichever order the two topics deliver them in.
	Version      int    `bson:"version"`
	Mode         string `bson:"mode"`
	WriteMailbox string `bson:"write_mailbox"`
}

// Rules returns the projected rules in their wire form.
func (a *Admission) Rules() contract.Admission {
	return contract.Admission{Mode: a.Mode, WriteMailbox: a.WriteMailbox}
}

// Admission returns the object's projected rules; mongox.ErrNotFound when no event has told
// them yet.
func (s *Store) Admission(ctx context.Context, objectID string) (*Admission, error) {
	return byID[Admission](ctx, s.admissions, objectID)
}

// InsertAdmission records the rules an object was created with, unless a later version's rules
// got there first (the context topic may deliver before the identity topic).
func (s *Store) InsertAdmission(ctx context.Context, a *Admission) error {
	_, err := insertOnce(ctx, s.admissions, a)
	return err
}

// SetAdmission records the rules of a version, unless those of a later version are recorded. The
// update is conditioned on the stored version; when it finds no document to update it inserts
// one, and a duplicate key then means that another writer (the creation's insert, or a later
// version) got there meanwhile: the update is tried once more against that document.
func (s *Store) SetAdmission(ctx context.Context, a *Admission) error {
	filter := bson.D{{Key: "_id", Value: a.ObjectID}, {Key: "version", Value: bson.D{{Key: "$lt", Value: a.Version}}}}
	update := bson.D{{Key: "$set", Value: bson.D{
		{Key: "version", Value: a.Version}, {Key: "mode", Value: a.Mode}, {Key: "write_mailbox", Value: a.WriteMailbox},
	}}}
	for range 2 {
		_, err := s.admissions.UpdateOne(ctx, filter, update, options.UpdateOne().SetUpsert(true))
		if !mongox.IsDuplicateKey(err) {
			if err != nil {
				return fmt.Errorf("store admissions: %w", err)
			}
			return nil
		}
	}
	return nil // the stored rules are of this version or a later one
}
