package api

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/identity-svc/internal/object"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
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

func (h *handlers) createObject(c *gin.Context) error {
	var req createObjectRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	created, err := h.objects.Create(c.Request.Context(), httpx.RequestID(c), object.NewObject{
		InitialLLMTxt: deref(req.InitialLLMTxt), Rules: req.Rules, Visibility: (*contract.Visibility)(req.Visibility),
	})
	if err != nil {
		return err
	}
	o := created.Object
	c.JSON(http.StatusCreated, createObjectResponse{
		Hash: o.Hash, APIKey: created.APIKey, MailboxStatus: o.MailboxStatus, Visibility: string(o.Visibility),
		Version: o.Version, CreatedAt: clock.Format(o.CreatedAt),
	})
	return nil
}

func (h *handlers) getObject(c *gin.Context) error {
	o, err := h.objects.Read(c.Request.Context(), c.Param("hash"), authn.PrincipalFrom(c).Viewer())
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, objectResponse{
		Hash: o.Hash, MailboxStatus: o.MailboxStatus, Visibility: string(o.Visibility), Version: o.Version,
		CreatedAt: clock.Format(o.CreatedAt), UpdatedAt: clock.Format(o.UpdatedAt),
	})
	return nil
}

type customHashRequest struct {
	Username         *string `json:"username" required:"true"`
	PaymentReference *string `json:"payment_reference"`
}

func (h *handlers) claimCustomHash(c *gin.Context) error {
	p := authn.PrincipalFrom(c)
	if p == nil {
		return httpx.Unauthorized("an API key is required")
	}
	if !p.Owner {
		return ownerKeyNeeded()
	}
	var req customHashRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	r, err := h.objects.ClaimCustomHash(c.Request.Context(), httpx.RequestID(c), p.ObjectID, object.HashClaim{
		Username: *req.Username, PaymentReference: deref(req.PaymentReference),
	})
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"hash": r.Hash, "previous_hash": r.PreviousHash, "username": r.Username, "paid": r.Paid})
	return nil
}

type directoryEntry struct {
	Hash          string `json:"hash"`
	MailboxStatus string `json:"mailbox_status"`
	Title         string `json:"title"`
	CreatedAt     string `json:"created_at"`
}

func (h *handlers) directory(c *gin.Context) error {
	limit, before, err := httpx.PageKey(c, object.DirectoryScope)
	if err != nil {
		return err
	}
	objs, next, err := h.objects.Directory(c.Request.Context(), object.DirectoryQuery{
		Limit: limit, Before: before, Q: c.Query("q"), Status: c.Query("status"),
	})
	if err != nil {
		return err
	}
	out := make([]directoryEntry, len(objs))
	for i, o := range objs {
		out[i] = directoryEntry{Hash: o.Hash, MailboxStatus: o.MailboxStatus, Title: o.Title, CreatedAt: clock.Format(o.CreatedAt)}
	}
	c.JSON(http.StatusOK, gin.H{"objects": out, "next_cursor": nextCursor(object.DirectoryScope, next)})
	return nil
}
