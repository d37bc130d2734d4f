package api

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

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

func (h *Handler) getRules(c *gin.Context) error {
	// A private object's rules are its owner's to read: anyone else learns nothing of it (its
	// mailbox still takes messages, under the same rules).
	t, err := readable(c)
	if err != nil {
		return err
	}
	showBlocked, err := flag(c, "show_blocked_list")
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	p, err := h.Profiles.Profile(ctx, t.ObjectID)
	if err != nil {
		return err
	}
	resp := rulesResponse{Rules: p.Rules}
	if showBlocked && callerOwns(c, t) { // never shown to anyone else, whatever they ask
		blocked, err := h.Profiles.BlockedHashes(ctx, t.ObjectID)
		if err != nil {
			return err
		}
		resp.BlockedHashes = &blocked
	}
	c.JSON(http.StatusOK, resp)
	return nil
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

// decodeRules reads the rules of PUT rules, sent either as JSON text (body) or as an object.
func decodeRules(c *gin.Context) (*contract.Rules, error) {
	var req putRulesRequest
	if err := httpx.Decode(c, &req); err != nil {
		return nil, err
	}
	raw := req.Rules
	switch {
	case req.Body != nil && len(req.Rules) > 0:
		return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "send either body or rules, not both")
	case req.Body != nil:
		if len(*req.Body) > MaxRulesBody {
			return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "body is longer than %d characters", MaxRulesBody)
		}
		raw = json.RawMessage(*req.Body)
		if !json.Valid(raw) {
			return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "body must be the rules object as JSON text")
		}
	case len(req.Rules) == 0:
		return nil, httpx.MissingField("body")
	}
	return contract.DecodeRules(raw)
}

func (h *Handler) putRules(c *gin.Context) error {
	p, err := ownerWrite(c, decodeRules, h.Profiles.PutRules)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, versionResponse{OK: true, Version: p.Version})
	return nil
}

// internalAdmission tells mailbox-svc what an object's current rules say of admission, while its
// projection of them is behind a rules write.
func (h *Handler) internalAdmission(c *gin.Context) error {
	a, err := h.Profiles.Admission(c.Request.Context(), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, a)
	return nil
}
