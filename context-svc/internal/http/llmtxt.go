package http

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/context-svc/internal/profile"
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
)

// textBody is the body of the routes that replace one markdown text: llm.txt, decision memory.
type textBody struct {
	Body *string `json:"body"`
}

// decodeTextBody reads a textBody: body is required and at most 256 KiB.
func decodeTextBody(c *gin.Context) (string, error) {
	var req textBody
	if err := httpx.Decode(c, &req); err != nil {
		return "", err
	}
	if req.Body == nil {
		return "", httpx.MissingField("body")
	}
	if len(*req.Body) > httpx.MaxTextBytes {
		return "", textTooLarge("body")
	}
	return *req.Body, nil
}

type putLLMTxtResponse struct {
	OK        bool   `json:"ok"`
	Version   int    `json:"version"`
	UpdatedAt string `json:"updated_at"`
}

// textTooLarge is the 413 of a text field over the 256 KiB limit.
func textTooLarge(field string) *httpx.Error {
	return httpx.Errorf(http.StatusRequestEntityTooLarge, httpx.CodePayloadTooLarge,
		"%s is larger than %d bytes", field, httpx.MaxTextBytes)
}

// setLLMTxt replaces the owner's markdown, and the title derived from it.
func setLLMTxt(p *store.Profile, md string) {
	p.LLMTxt = md
	p.Title = contract.ProfileTitle(md)
}

func (h *Handler) getLLMTxt(c *gin.Context) {
	t, ok := readable(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	p, err := h.profile(ctx, t.ObjectID)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	sources, err := h.composable(ctx, t.ObjectID, p.Included)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	c.Data(http.StatusOK, textPlain, []byte(profile.Compose(t.Hash, h.BaseURL, p.LLMTxt, sources)))
}

// internalProfile answers feed-svc's box page: the composed profile of the llm.txt read, for the
// hash the caller names (links in it use that hash).
func (h *Handler) internalProfile(c *gin.Context) {
	ctx := c.Request.Context()
	p, err := h.profile(ctx, c.Param("id"))
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	sources, err := h.composable(ctx, p.ObjectID, p.Included)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	c.JSON(http.StatusOK, contract.ComposedProfile{Markdown: profile.Compose(c.Query("hash"), h.BaseURL, p.LLMTxt, sources)})
}

func (h *Handler) putLLMTxt(c *gin.Context) {
	_, t, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	body, err := decodeTextBody(c)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	p, err := h.write(c, t, store.ChangeLLMTxt, func(p *store.Profile) error {
		setLLMTxt(p, body)
		return nil
	})
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	c.JSON(http.StatusOK, putLLMTxtResponse{OK: true, Version: p.Version, UpdatedAt: clock.Format(p.UpdatedAt)})
}

func (h *Handler) coach(c *gin.Context) {
	t, ok := readable(c)
	if !ok {
		return
	}
	p, err := h.profile(c.Request.Context(), t.ObjectID)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	text := profile.Coach(profile.CoachInput{
		Hash: t.Hash, BaseURL: h.BaseURL, Markdown: p.LLMTxt, Sources: len(p.Included), Rules: p.Rules,
	})
	c.Data(http.StatusOK, textPlain, []byte(text))
}

func (h *Handler) agentCard(c *gin.Context) {
	t, ok := readable(c)
	if !ok {
		return
	}
	p, err := h.profile(c.Request.Context(), t.ObjectID)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	c.JSON(http.StatusOK, profile.Card(t.Hash, h.BaseURL, p.LLMTxt, p.Version, p.Rules))
}
