package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/svcdev/svc/pkg/mongox"
)

// ObjectVisibility is webhook-svc's projection of an object's visibility, fed by identity-svc's
// object.created events (and by the gateway's resolution of a box when a context subscription is
// made), so that the fan-out decides whether a stranger's subscription may see an object's
// events from its own database.
type ObjectVisibility struct {
	ID         string `bson:"_id"` // the object id
	Visibility string `bson:"visibility"`
}

// PutVisibility records an object's visibility.
func (s *Store) PutVisibility(ctx context.Context, objectID, visibility string) error {
	return s.replace(ctx, Objects, objectID, ObjectVisibility{ID: objectID, Visibility: visibility})
}

// Visibility returns an object's recorded visibility, or "" when none is.
func (s *Store) Visibility(ctx context.Context, objectID string) (string, error) {
	var o ObjectVisibility
	err := mongox.FindOne(ctx, s.c(Objects), mongox.ByID(objectID), &o)
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read object visibility: %w", err)
	}
	return o.Visibility, nil
}
