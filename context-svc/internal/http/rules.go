package http

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
)

// MaxRulesBody bounds the rules text of PUT rules.
const MaxRulesBody = 16 << 10

type rulesResponse struct {
	*contract.Rules
	// BlockedHashes is shown only to the owner who asks for it.
	BlockedHashes *[]string `json:"blocked_hashes,omitempty"`
}

type putRulesRequest struct {
	// Body is the rules object as JSON text (the spec's shape); Rules is the same as an object.
	Body  *string         `json:"body"`
	Rules json.RawMessage `json:"rules"`
}

func (h *Handler) getRules(c *gin.Context) {
	// Rules are public, also those of a private object: anyone may still write to its mailbox.
	t, ok := target(c)
	if !ok {
		return
	}
	showBlocked, err := flag(c, "show_blocked_list")
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	ctx := c.Request.Context()
	p, err := h.profile(ctx, t.ObjectID)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	resp := rulesResponse{Rules: p.Rules}
	if showBlocked && callerOwns(c, t) { // never shown to anyone else, whatever they ask
		blocked, err := h.Mailbox.BlockedHashes(ctx, t.ObjectID)
		if err != nil {
			httpx.Abort(c, httpx.Unavailable(err))
			return
		}
		resp.BlockedHashes = &blocked
	}
	c.JSON(http.StatusOK, resp)
}

// flag reads a boolean query parameter: 1 or true, 0 or false, or absent.
func flag(c *gin.Context, name string) (bool, error) {
	switch c.Query(name) {
	case "", "0", "false":
		return false, nil
	case "1", "true":
		return true, nil
	}
	return false, httpx.BadRequest(httpx.CodeInvalidRequest, "%s must be 1 or 0", name)
}

func (h *Handler) putRules(c *gin.Context) {
	_, t, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	var req putRulesRequest
	if err := httpx.Decode(c, &req); err != nil {
		httpx.Abort(c, err)
		return
	}
	raw := req.Rules
	switch {
	case req.Body != nil && len(req.Rules) > 0:
		httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidRequest, "send either body or rules, not both"))
		return
	case req.Body != nil:
		if len(*req.Body) > MaxRulesBody {
			httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidRequest, "body is longer than %d characters", MaxRulesBody))
			return
		}
		raw = json.RawMessage(*req.Body)
		if !json.Valid(raw) {
			httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidRequest, "body must be the rules object as JSON text"))
			return
		}
	case len(req.Rules) == 0:
		httpx.Abort(c, httpx.MissingField("body"))
		return
	}
	rules, err := contract.DecodeRules(raw)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	p, err := h.write(c, t, store.ChangeRules, func(p *store.Profile) error {
		p.Rules = rules
		return nil
	})
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	c.JSON(http.StatusOK, versionResponse{OK: true, Version: p.Version})
}

// internalRules serves mailbox-svc's participant admission: the stored rules, or null.
func (h *Handler) internalRules(c *gin.Context) {
	p, err := h.profile(c.Request.Context(), c.Param("id"))
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	c.JSON(http.StatusOK, p.Rules)
}
