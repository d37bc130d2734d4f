package mailbox

import (
	"context"
	"errors"
	"log/slog"

	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/identity"
)

// Identity is what the use cases need of identity-svc: hash resolution (cached) and its internal
// object read.
type Identity interface {
	Resolve(ctx context.Context, hash string) (*identity.Object, error)
	Object(ctx context.Context, objectID string) (*contract.Object, error)
}

// HashStore keeps the current hash of every object the service has seen.
type HashStore interface {
	Hashes(ctx context.Context, objectIDs []string) (map[string]string, error)
	RememberHash(ctx context.Context, objectID, hash string) error
}

// Names turns the hashes callers use into objects, and the object ids the service stores into
// current hashes.
type Names struct {
	Store    HashStore
	Identity Identity
	Log      *slog.Logger
}

// Resolve returns the object a hash (current or previous) names; what names the object in a 404.
func (n *Names) Resolve(ctx context.Context, hash, what string) (*identity.Object, error) {
	obj, err := n.Identity.Resolve(ctx, hash)
	switch {
	case errors.Is(err, identity.ErrNotFound):
		return nil, apierr.NotFound(what)
	case err != nil:
		return nil, apierr.Unavailable(err)
	}
	return obj, nil
}

// Hashes returns the current hash of each object. Objects are normally known from the send or
// block that first named them; any other is asked of identity-svc and remembered. An object
// identity-svc does not know is left out.
func (n *Names) Hashes(ctx context.Context, objectIDs []string) (map[string]string, error) {
	known, err := n.Store.Hashes(ctx, objectIDs)
	if err != nil {
		return nil, err
	}
	for _, id := range objectIDs {
		if _, ok := known[id]; ok {
			continue
		}
		obj, err := n.Identity.Object(ctx, id)
		if errors.Is(err, identity.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, apierr.Unavailable(err)
		}
		known[id] = obj.Hash
		// Remembering only saves the next read a call; the answer is right without it.
		if err := n.Store.RememberHash(ctx, id, obj.Hash); err != nil {
			n.Log.Warn("remembering a hash failed", "object_id", id, "error", err)
		}
	}
	return known, nil
}
