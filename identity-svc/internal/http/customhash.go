package http

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
)

// MajorSocialNetworks are the networks whose verified claim of a matching handle makes a
// custom hash free.
var MajorSocialNetworks = []string{"github", "x", "linkedin", "instagram"}

type customHashRequest struct {
	Username         *string `json:"username"`
	PaymentReference *string `json:"payment_reference"`
}

func (h *Handler) claimCustomHash(c *gin.Context) {
	p := authn.PrincipalFrom(c)
	if p == nil {
		httpx.Abort(c, httpx.Unauthorized("an API key is required"))
		return
	}
	if !p.Owner {
		httpx.Abort(c, httpx.Forbidden(httpx.CodeInsufficientScope, "this route needs the owner key, not a sub-key"))
		return
	}
	var req customHashRequest
	if err := httpx.Decode(c, &req); err != nil {
		httpx.Abort(c, err)
		return
	}
	if req.Username == nil {
		httpx.Abort(c, httpx.MissingField("username"))
		return
	}
	username := *req.Username
	if !apikey.ValidUsername(username) {
		httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidUsername,
			"username must match ^[a-z0-9_]{3,32}$ and may not start with sk_"))
		return
	}
	ctx := c.Request.Context()
	obj, err := h.Store.Object(ctx, p.ObjectID)
	if err != nil {
		httpx.Abort(c, storeError(err, "object"))
		return
	}
	newHash := apikey.HashPrefix + username
	if obj.Hash == newHash {
		httpx.Abort(c, httpx.Conflict(httpx.CodeHashTaken, "this object already has that hash"))
		return
	}
	free := hasMatchingSocialClaim(obj, username)
	if !free && (req.PaymentReference == nil || *req.PaymentReference == "") {
		httpx.Abort(c, httpx.New(http.StatusPaymentRequired, httpx.CodePaymentRequired,
			"a custom hash costs 100 USD: send a payment_reference, or verify a matching github, x, linkedin or instagram claim first"))
		return
	}
	// The voucher is spent before the name is claimed, and given back if the name is taken, so
	// that a failed claim costs nothing and a voucher never pays twice.
	var voucherID string
	if !free {
		var err error
		if voucherID, err = h.redeem(c, *req.PaymentReference, obj.ID); err != nil {
			httpx.Abort(c, err)
			return
		}
	}
	ev := events.MustNew(events.TopicIdentity, events.ObjectHashChanged, obj.ID, newHash, httpx.RequestID(c),
		contract.HashChangedData{Hash: newHash, PreviousHash: obj.Hash, Username: username})
	err = h.Outbox.Stage(ctx, store.Hashes, newHash, ev)
	if err == nil {
		err = h.Store.ClaimHash(ctx, newHash, obj.ID, ev)
	}
	if err != nil {
		if voucherID != "" {
			h.Store.ReleaseVoucher(ctx, voucherID, obj.ID)
		}
		if errors.Is(err, store.ErrTaken) {
			err = httpx.Conflict(httpx.CodeHashTaken, "that username is taken")
		}
		httpx.Abort(c, err)
		return
	}
	if err := h.Store.ChangeHash(ctx, obj.ID, newHash, username, clock.Now()); err != nil {
		httpx.Abort(c, err)
		return
	}
	h.forgetHashes(ctx, append(obj.Hashes, newHash)...)
	h.ETags.Changed(ctx, obj.ID)
	h.Outbox.Confirm(ev)
	c.JSON(http.StatusOK, gin.H{"hash": newHash, "previous_hash": obj.Hash, "username": username, "paid": !free})
}

// redeem verifies a payment reference and spends it, returning the id under which it is spent.
func (h *Handler) redeem(c *gin.Context, ref, objectID string) (string, error) {
	id, err := h.Payments.Verify(ref)
	if err != nil {
		return "", httpx.New(http.StatusPaymentRequired, httpx.CodePaymentRequired, "the payment reference could not be verified")
	}
	err = h.Store.UseVoucher(c.Request.Context(), id, objectID, clock.Now())
	if errors.Is(err, store.ErrTaken) {
		return "", httpx.New(http.StatusPaymentRequired, httpx.CodePaymentRequired, "the payment reference was already used")
	}
	return id, err
}

func hasMatchingSocialClaim(obj *store.Object, username string) bool {
	for _, s := range obj.SocialHandles {
		handle := strings.ToLower(strings.TrimPrefix(s.Handle, "@"))
		if slices.Contains(MajorSocialNetworks, s.Network) && handle == username {
			return true
		}
	}
	return false
}
