package object

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/identity"
)

// HashClaim is what a custom-hash claim asks for.
type HashClaim struct {
	Username         string
	PaymentReference string
}

// ClaimedHash is the outcome of a custom-hash claim.
type ClaimedHash struct {
	Hash         string
	PreviousHash string
	Username     string
	Paid         bool
}

// FreeHashNetworks are the networks whose verified claim of a handle makes svc_<handle> free:
// each has one global namespace on fixed hosts, so a handle there names one account in the
// world. A federated network (Mastodon) is not one of them: alice@one.example and alice@two.example
// are different people, and anyone can run an instance, so its claims never make a bare username
// free.
var FreeHashNetworks = []string{"github", "x", "linkedin", "reddit"}

// ClaimCustomHash makes svc_<username> the object's current hash, paid by a voucher or, without
// a payment reference, for free with a verified claim of the same handle on one of
// FreeHashNetworks. The claim is one of the object's facts (fed by claims-svc's claim.verified
// and claim.lapsed events), so no call to claims-svc is needed.
func (s *Service) ClaimCustomHash(ctx context.Context, requestID, objectID string, in HashClaim) (*ClaimedHash, error) {
	if !apikey.ValidUsername(in.Username) {
		return nil, apierr.BadRequest(apierr.CodeInvalidUsername,
			"username must match ^[a-z0-9_]{3,32}$ and may not start with sk_")
	}
	obj, err := s.Store.Object(ctx, objectID)
	if err != nil {
		return nil, notFound(err, "object")
	}
	newHash := apikey.HashPrefix + in.Username
	if obj.Hash == newHash {
		return nil, apierr.Conflict(apierr.CodeHashTaken, "this object already has that hash")
	}
	free := false
	if in.PaymentReference == "" {
		if free = freeHandle(obj, in.Username); !free {
			return nil, apierr.New(http.StatusPaymentRequired, apierr.CodePaymentRequired,
				"a custom hash costs 100 USD: send a payment_reference, or verify a matching github, x, linkedin or reddit claim first")
		}
	}
	// The voucher is spent before the name is claimed, and given back if the name is taken, so
	// that a failed claim costs nothing and a voucher never pays twice.
	var voucherID string
	if !free {
		if voucherID, err = s.redeem(ctx, in.PaymentReference, obj.ID); err != nil {
			return nil, err
		}
	}
	if err := s.Store.ClaimHash(ctx, newHash, obj.ID); err != nil {
		if errors.Is(err, store.ErrTaken) {
			err = apierr.Conflict(apierr.CodeHashTaken, "that username is taken")
		}
		return nil, s.undo(ctx, err, s.releaseVoucher(ctx, voucherID, obj.ID))
	}
	// The change is the object's next hash change, one unique insert: of two concurrent claims
	// only one is recorded, and the other gives its name and voucher back.
	ev := hashChanged(obj.ID, newHash, obj.Hash, in.Username, requestID)
	if err := s.Store.ChangeHash(ctx, obj, newHash, in.Username, clock.Now(), s.Outbox, ev); err != nil {
		if errors.Is(err, store.ErrTaken) {
			err = apierr.Conflict(apierr.CodeConflict, "the object's hash changed meanwhile, retry")
		}
		return nil, s.undo(ctx, err,
			func() error { return s.Store.ReleaseHash(ctx, newHash, obj.ID) },
			s.releaseVoucher(ctx, voucherID, obj.ID))
	}
	if err := s.forgetHashes(ctx, append(obj.Hashes, newHash)...); err != nil {
		// The change is stored; cached resolutions show the previous hash until they expire.
		s.Log.WarnContext(ctx, "hash change not yet visible to cached resolutions", "ttl", identity.HashTTL, "error", err)
	}
	s.ETags.Changed(ctx, obj.ID)
	s.Outbox.Confirm(ev)
	return &ClaimedHash{Hash: newHash, PreviousHash: obj.Hash, Username: in.Username, Paid: !free}, nil
}

// freeHandle reports whether the object holds a verified claim (one that has not lapsed) of
// username on one of FreeHashNetworks.
func freeHandle(obj *store.Object, username string) bool {
	return slices.ContainsFunc(obj.SocialHandles, func(h store.SocialHandle) bool {
		return slices.Contains(FreeHashNetworks, h.Network) && h.Handle == username
	})
}

// releaseVoucher is the undo step of redeem (nothing to undo for a free claim).
func (s *Service) releaseVoucher(ctx context.Context, voucherID, objectID string) func() error {
	return func() error {
		if voucherID == "" {
			return nil
		}
		return s.Store.ReleaseVoucher(ctx, voucherID, objectID)
	}
}

// redeem verifies a payment reference and spends it, returning the id under which it is spent.
func (s *Service) redeem(ctx context.Context, ref, objectID string) (string, error) {
	id, err := s.Payments.Verify(ref)
	if err != nil {
		return "", apierr.New(http.StatusPaymentRequired, apierr.CodePaymentRequired, "the payment reference could not be verified")
	}
	err = s.Store.UseVoucher(ctx, id, objectID, clock.Now())
	if errors.Is(err, store.ErrTaken) {
		return "", apierr.New(http.StatusPaymentRequired, apierr.CodePaymentRequired, "the payment reference was already used")
	}
	return id, err
}
