package object

import (
	"context"

	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
)

// PreloadObject is an object for Preload: its profile text, whether it is private, and whether
// it holds a verified claim.
type PreloadObject struct {
	InitialLLMTxt string
	Private       bool
	Verified      bool
}

// PreloadedObject is a preloaded object's hash and owner key.
type PreloadedObject struct {
	ObjectID, Hash, APIKey string
}

// Preload stores objects as Create makes them (ids, hash, owner key, title) and, for those
// Verified, a verified claim as claims-svc's event records it, in bulk (store.Preload): for
// benchmarks that measure reads at a given size. It writes no events and no signing keys (those
// are made when first needed).
func Preload(ctx context.Context, st *store.Store, in []PreloadObject) ([]PreloadedObject, error) {
	items := make([]store.Preloaded, len(in))
	out := make([]PreloadedObject, len(in))
	now := clock.Now()
	for i, p := range in {
		id := apikey.NewID("obj")
		hash := apikey.NewHash()
		visibility := contract.Public
		if p.Private {
			visibility = contract.Private
		}
		key, ownerKey := newOwnerKey(id, now)
		items[i] = store.Preloaded{
			Object: &store.Object{ID: id, Hash: hash, Hashes: []string{hash}, Visibility: visibility, MailboxStatus: StatusUnclaimed,
				Version: 1, Title: contract.ProfileTitle(p.InitialLLMTxt), InitialLLMTxt: p.InitialLLMTxt, CreatedAt: now, UpdatedAt: now},
			OwnerKey: ownerKey,
		}
		if p.Verified {
			items[i].Claim = &store.SocialHandle{Network: "dns", ClaimID: apikey.NewID("clm")}
		}
		out[i] = PreloadedObject{ObjectID: id, Hash: hash, APIKey: key}
	}
	if err := st.Preload(ctx, items); err != nil {
		return nil, err
	}
	return out, nil
}
