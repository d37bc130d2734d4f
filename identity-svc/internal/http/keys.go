package http

import (
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
)

// MaxLabel bounds key and association labels.
const MaxLabel = 200

type createKeyRequest struct {
	Label  *string  `json:"label"`
	Scopes []string `json:"scopes"`
}

type keyResponse struct {
	ID         string   `json:"id"`
	Label      string   `json:"label"`
	Scopes     []string `json:"scopes"`
	Key        string   `json:"key,omitempty"`
	Prefix     string   `json:"prefix,omitempty"`
	CreatedAt  string   `json:"created_at"`
	LastUsedAt *string  `json:"last_used_at"`
}

// ownerKeyOnly admits only the owner key of the route's object: key management is never
// delegated to a sub-key.
func ownerKeyOnly(c *gin.Context) (*authn.Principal, *authn.Target, bool) {
	p, t, ok := authn.RequireOwner(c)
	if ok && !p.Owner {
		httpx.Abort(c, httpx.Forbidden(httpx.CodeInsufficientScope, "this route needs the owner key, not a sub-key"))
		return nil, nil, false
	}
	return p, t, ok
}

func (h *Handler) rotateKey(c *gin.Context) {
	p, t, ok := ownerKeyOnly(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	now := clock.Now()
	key, digest := apikey.Generate(apikey.OwnerPrefix)
	next := &store.Key{
		Digest: digest, KeyID: apikey.NewID("key"), ObjectID: p.ObjectID, Owner: true, Label: "owner",
		Scopes: []string{authn.ScopeRead, authn.ScopeWrite, authn.ScopeMailbox}, Prefix: apikey.DisplayPrefix(key), CreatedAt: now,
	}
	if err := h.Store.InsertKey(ctx, next); err != nil {
		httpx.Abort(c, err)
		return
	}
	ev := events.MustNew(events.TopicIdentity, events.KeyRotated, p.ObjectID, t.Hash, httpx.RequestID(c),
		contract.KeyEventData{KeyID: p.KeyID, NewKeyID: next.KeyID})
	old, err := h.Store.RevokeKey(ctx, p.ObjectID, p.KeyID, true, now, h.Outbox, ev)
	if err != nil {
		httpx.Abort(c, storeError(err, "key"))
		return
	}
	if err := identity.Revoke(ctx, h.Redis, old.Digest); err != nil {
		// The key is revoked in the store; without the tombstone a gateway could accept it for
		// the cache lifetime, so the caller must learn that the rotation is not yet effective.
		httpx.Abort(c, httpx.Unavailable(err))
		return
	}
	if err := h.Store.SetOwnerKey(ctx, p.ObjectID, next.KeyID, now); err != nil {
		httpx.Abort(c, err)
		return
	}
	h.Outbox.Confirm(ev)
	c.JSON(http.StatusOK, gin.H{"hash": t.Hash, "api_key": key, "key_id": next.KeyID, "rotated_at": clock.Format(now)})
}

func (h *Handler) createKey(c *gin.Context) {
	p, t, ok := ownerKeyOnly(c)
	if !ok {
		return
	}
	var req createKeyRequest
	if err := httpx.Decode(c, &req); err != nil {
		httpx.Abort(c, err)
		return
	}
	label := ""
	if req.Label != nil {
		label = *req.Label
	}
	if len(label) > MaxLabel {
		httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidRequest, "label is longer than %d characters", MaxLabel))
		return
	}
	scopes, err := normalizeScopes(req.Scopes)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	now := clock.Now()
	key, digest := apikey.Generate(apikey.SubPrefix)
	k := &store.Key{
		Digest: digest, KeyID: apikey.NewID("key"), ObjectID: p.ObjectID, Label: label, Scopes: scopes,
		Prefix: apikey.DisplayPrefix(key), CreatedAt: now,
	}
	ev := events.MustNew(events.TopicIdentity, events.KeyCreated, p.ObjectID, t.Hash, httpx.RequestID(c),
		contract.KeyEventData{KeyID: k.KeyID})
	k.Events = events.IDs(ev)
	if err := h.Outbox.Stage(c.Request.Context(), store.Keys, digest, ev); err != nil {
		httpx.Abort(c, err)
		return
	}
	if err := h.Store.InsertKey(c.Request.Context(), k); err != nil {
		httpx.Abort(c, err)
		return
	}
	h.Outbox.Confirm(ev)
	resp := keyView(k)
	resp.Key = key
	c.JSON(http.StatusCreated, resp)
}

// normalizeScopes accepts a non-empty set of read, write and mailbox (default read and write).
func normalizeScopes(in []string) ([]string, error) {
	if in == nil {
		return []string{authn.ScopeRead, authn.ScopeWrite}, nil
	}
	if len(in) == 0 {
		return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "scopes must name at least one of read, write, mailbox")
	}
	var out []string
	for _, s := range in {
		if s != authn.ScopeRead && s != authn.ScopeWrite && s != authn.ScopeMailbox {
			return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "unknown scope %q: use read, write, mailbox", s)
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

func keyView(k *store.Key) keyResponse {
	return keyResponse{ID: k.KeyID, Label: k.Label, Scopes: k.Scopes, Prefix: k.Prefix,
		CreatedAt: clock.Format(k.CreatedAt), LastUsedAt: clock.FormatPtr(k.LastUsedAt)}
}

func (h *Handler) listKeys(c *gin.Context) {
	p, _, ok := ownerKeyOnly(c)
	if !ok {
		return
	}
	keys, err := h.Store.SubKeys(c.Request.Context(), p.ObjectID)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	out := make([]keyResponse, len(keys))
	for i := range keys {
		out[i] = keyView(&keys[i])
	}
	c.JSON(http.StatusOK, gin.H{"keys": out})
}

func (h *Handler) revokeKey(c *gin.Context) {
	p, t, ok := ownerKeyOnly(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	id := c.Param("keyId")
	ev := events.MustNew(events.TopicIdentity, events.KeyRevoked, p.ObjectID, t.Hash, httpx.RequestID(c),
		contract.KeyEventData{KeyID: id})
	k, err := h.Store.RevokeKey(ctx, p.ObjectID, id, false, clock.Now(), h.Outbox, ev)
	if err != nil {
		httpx.Abort(c, storeError(err, "key"))
		return
	}
	if err := identity.Revoke(ctx, h.Redis, k.Digest); err != nil {
		httpx.Abort(c, httpx.Unavailable(err))
		return
	}
	h.Outbox.Confirm(ev)
	c.JSON(http.StatusOK, gin.H{"ok": true, "revoked": id})
}
