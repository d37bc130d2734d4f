package http

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
)

type createObjectRequest struct {
	InitialLLMTxt *string         `json:"initial_llm_txt"`
	Rules         json.RawMessage `json:"rules"`
	Visibility    *string         `json:"visibility"`
}

type createObjectResponse struct {
	Hash          string `json:"hash"`
	APIKey        string `json:"api_key"`
	MailboxStatus string `json:"mailbox_status"`
	Visibility    string `json:"visibility"`
	Version       int    `json:"version"`
	CreatedAt     string `json:"created_at"`
}

type objectResponse struct {
	Hash          string `json:"hash"`
	MailboxStatus string `json:"mailbox_status"`
	Visibility    string `json:"visibility"`
	Version       int    `json:"version"`
	CreatedAt     string `json:"created_at"`
	UpdatedAt     string `json:"updated_at"`
}

// Mailbox statuses and visibilities of the spec.
const (
	StatusUnclaimed = "unclaimed"
	StatusClaimed   = "claimed"
	Public          = "public"
	Private         = "private"
)

func (h *Handler) createObject(c *gin.Context) {
	var req createObjectRequest
	if err := httpx.Decode(c, &req); err != nil {
		httpx.Abort(c, err)
		return
	}
	visibility := Public
	if req.Visibility != nil {
		visibility = *req.Visibility
	}
	if visibility != Public && visibility != Private {
		httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidVisibility, "visibility must be public or private"))
		return
	}
	var llm string
	if req.InitialLLMTxt != nil {
		llm = *req.InitialLLMTxt
	}
	if len(llm) > httpx.MaxTextBytes {
		httpx.Abort(c, httpx.Errorf(http.StatusRequestEntityTooLarge, httpx.CodePayloadTooLarge,
			"initial_llm_txt is larger than %d bytes", httpx.MaxTextBytes))
		return
	}
	rules, err := contract.DecodeRules(req.Rules)
	if err != nil {
		httpx.Abort(c, err)
		return
	}

	ctx := c.Request.Context()
	now := clock.Now()
	objectID := apikey.NewID("obj")
	hash, err := h.reserveNewHash(c, objectID)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	// The object is stored before its owner key, and object.created travels in the key's
	// document: a key document is never updated by anyone but the relay, and an object whose key
	// could not be stored is removed again without an event ever naming it.
	key, digest := apikey.Generate(apikey.OwnerPrefix)
	ownerKey := &store.Key{
		Digest: digest, KeyID: apikey.NewID("key"), ObjectID: objectID, Owner: true, Label: "owner",
		Scopes: []string{authn.ScopeRead, authn.ScopeWrite, authn.ScopeMailbox}, Prefix: apikey.DisplayPrefix(key), CreatedAt: now,
	}
	obj := &store.Object{
		ID: objectID, Hash: hash, Hashes: []string{hash}, Visibility: visibility, MailboxStatus: StatusUnclaimed,
		Version: 1, Title: contract.ProfileTitle(llm), InitialLLMTxt: llm, Rules: rules, OwnerKeyID: ownerKey.KeyID,
		CreatedAt: now, UpdatedAt: now,
	}
	ev, err := events.New(events.TopicIdentity, events.ObjectCreated, objectID, hash, httpx.RequestID(c),
		contract.ObjectCreatedData{Object: internalView(obj)})
	if err == nil {
		err = h.Outbox.Stage(ctx, store.Keys, digest, ev)
	}
	if err != nil {
		h.Store.ReleaseHash(ctx, hash, objectID)
		httpx.Abort(c, err)
		return
	}
	if err := h.Store.InsertObject(ctx, obj); err != nil {
		h.Store.ReleaseHash(ctx, hash, objectID)
		httpx.Abort(c, err)
		return
	}
	ownerKey.Events = events.IDs(ev)
	if err := h.Store.InsertKey(ctx, ownerKey); err != nil {
		h.Store.DeleteObject(ctx, objectID)
		h.Store.ReleaseHash(ctx, hash, objectID)
		httpx.Abort(c, err)
		return
	}
	h.Outbox.Confirm(ev)
	c.JSON(http.StatusCreated, createObjectResponse{
		Hash: hash, APIKey: key, MailboxStatus: obj.MailboxStatus, Visibility: visibility,
		Version: obj.Version, CreatedAt: clock.Format(now),
	})
}

// reserveNewHash draws generated hashes until one is free (a clash of 100 random bits is
// practically impossible, but a custom hash could take a generated-looking name).
func (h *Handler) reserveNewHash(c *gin.Context, objectID string) (string, error) {
	for range 5 {
		hash := apikey.NewHash()
		err := h.Store.ClaimHash(c.Request.Context(), hash, objectID)
		if err == nil {
			return hash, nil
		}
		if err != store.ErrTaken {
			return "", err
		}
	}
	return "", httpx.Conflict(httpx.CodeConflict, "could not allocate a hash, retry")
}

func (h *Handler) getObject(c *gin.Context) {
	obj, err := h.Store.ObjectByHash(c.Request.Context(), c.Param("hash"))
	if err != nil {
		httpx.Abort(c, storeError(err, "object"))
		return
	}
	c.JSON(http.StatusOK, objectResponse{
		Hash: obj.Hash, MailboxStatus: obj.MailboxStatus, Visibility: obj.Visibility, Version: obj.Version,
		CreatedAt: clock.Format(obj.CreatedAt), UpdatedAt: clock.Format(obj.UpdatedAt),
	})
}

func internalView(o *store.Object) contract.Object {
	return contract.Object{
		ObjectID: o.ID, Hash: o.Hash, Visibility: o.Visibility, MailboxStatus: o.MailboxStatus,
		Version: o.Version, Title: o.Title, InitialLLMTxt: o.InitialLLMTxt, Rules: o.Rules,
		CreatedAt: clock.Format(o.CreatedAt), UpdatedAt: clock.Format(o.UpdatedAt),
	}
}
