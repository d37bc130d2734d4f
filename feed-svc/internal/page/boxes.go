package page

import (
	"context"
	"errors"

	"github.com/svcdev/svc/feed-svc/internal/feed"
	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/mongox"
)

// Resolver resolves a box's hash (identity-svc).
type Resolver interface {
	Resolve(ctx context.Context, hash string) (*identity.Object, error)
}

// Profiles reads an object's composed profile (context-svc).
type Profiles interface {
	ComposedProfile(ctx context.Context, objectID, hash string) (string, error)
}

// BoxStore is what a box page reads of feed-svc's own data: whether the box is a feed, and what
// the projections know of the object (three point reads).
type BoxStore interface {
	IsFeed(ctx context.Context, objectID string) (bool, error)
	Object(ctx context.Context, objectID string) (*store.Object, error)
	VerifiedClaims(ctx context.Context, objectID string) ([]store.Claim, error)
}

// LatestItems reads the newest items of a feed (feed.Feeds).
type LatestItems interface {
	Latest(ctx context.Context, boxID string, n int) ([]feed.Item, error)
}

// Boxes builds what a box page shows, from identity-svc, context-svc and feed-svc's own data.
type Boxes struct {
	Resolver Resolver
	Profiles Profiles
	Store    BoxStore
	Items    LatestItems
}

// ErrNoBox says that a box page has nothing to show: the box is unknown, or the viewer may not
// learn of it.
var ErrNoBox = errors.New("no such box")

// boxItems is how many of a feed's newest items its box page shows.
const boxItems = 10

// Box returns the page of the box hash as viewer (contract.Principal.Viewer) sees it, or
// ErrNoBox for an unknown box or one viewer may not learn of (contract.Visible).
func (b *Boxes) Box(ctx context.Context, hash, viewer string) (*Box, error) {
	obj, err := b.Resolver.Resolve(ctx, hash)
	switch {
	case errors.Is(err, identity.ErrNotFound):
		return nil, ErrNoBox
	case err != nil:
		return nil, apierr.Unavailable(err)
	}
	if !contract.Visible(obj.Visibility, obj.ObjectID, viewer) {
		return nil, ErrNoBox
	}
	md, err := b.Profiles.ComposedProfile(ctx, obj.ObjectID, obj.Hash)
	if err != nil {
		return nil, apierr.Unavailable(err)
	}
	isFeed, err := b.Store.IsFeed(ctx, obj.ObjectID)
	if err != nil {
		return nil, err
	}
	var items []feed.Item
	if isFeed {
		if items, err = b.Items.Latest(ctx, obj.ObjectID, boxItems); err != nil {
			return nil, err
		}
	}
	out := &Box{Hash: obj.Hash, Title: contract.ProfileTitle(md), Profile: md, Items: items, IsFeed: isFeed,
		Claimed: obj.MailboxStatus == "claimed"}
	if err := b.badges(ctx, obj.ObjectID, out); err != nil {
		return nil, err
	}
	return out, nil
}

// badges fills in what the projections know of the object: when it was created, whether its
// hash was chosen, its verified claims (two point reads). A box whose creation is not projected
// yet shows none of them.
func (b *Boxes) badges(ctx context.Context, objectID string, box *Box) error {
	o, err := b.Store.Object(ctx, objectID)
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	box.Since, box.CustomHash = o.CreatedAt, o.HashAt.After(o.CreatedAt)
	box.Claims, err = b.Store.VerifiedClaims(ctx, objectID)
	return err
}
