package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/context-svc/internal/profile"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpsig"
	"github.com/svcdev/svc/pkg/httpx"
)

// textBody is the body of the routes that replace one markdown text: llm.txt, decision memory.
type textBody struct {
	Body *string `json:"body" required:"true"`
}

// decodeTextBody reads a textBody: body is required and at most 256 KiB.
func decodeTextBody(c *gin.Context) (string, error) {
	var req textBody
	if err := httpx.Decode(c, &req); err != nil {
		return "", err
	}
	if len(*req.Body) > httpx.MaxTextBytes {
		return "", profile.TextTooLarge("body")
	}
	return *req.Body, nil
}

type putLLMTxtResponse struct {
	OK        bool   `json:"ok"`
	Version   int    `json:"version"`
	UpdatedAt string `json:"updated_at"`
}

func (h *Handler) getLLMTxt(c *gin.Context) error {
	t, p, err := h.readableProfile(c)
	if err != nil {
		return err
	}
	md, err := h.Profiles.LLMTxt(c.Request.Context(), p, t.Hash, h.BaseURL)
	if err != nil {
		return err
	}
	c.Data(http.StatusOK, textPlain, []byte(md))
	return nil
}

// internalProfile answers feed-svc's box page: the composed profile of the llm.txt read, for the
// hash the caller names (links in it use that hash).
func (h *Handler) internalProfile(c *gin.Context) error {
	cp, err := h.Profiles.ComposedProfile(c.Request.Context(), c.Param("id"), c.Query("hash"), h.BaseURL)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, cp)
	return nil
}

func (h *Handler) putLLMTxt(c *gin.Context) error {
	p, err := ownerWrite(c, decodeTextBody, h.Profiles.PutLLMTxt)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, putLLMTxtResponse{OK: true, Version: p.Version, UpdatedAt: clock.Format(p.UpdatedAt)})
	return nil
}

func (h *Handler) coach(c *gin.Context) error {
	t, p, err := h.readableProfile(c)
	if err != nil {
		return err
	}
	text := profile.Coach(profile.CoachInput{
		Hash: t.Hash, BaseURL: h.BaseURL, Markdown: p.LLMTxt, Sources: len(p.Included), Rules: p.Rules,
	})
	c.Data(http.StatusOK, textPlain, []byte(text))
	return nil
}

// serviceCard serves svc's own A2A card, signed with svc's key and bound to its host by jku.
func (h *Handler) serviceCard(c *gin.Context) error {
	card := profile.ServiceCard(h.BaseURL, "1")
	if h.ServiceKey != nil {
		if err := card.SignWith(h.ServiceKey.Key, h.ServiceKey.KeyID, h.BaseURL+httpsig.DirectoryPath); err != nil {
			return err
		}
	}
	c.Header("Cache-Control", "public, max-age=300")
	c.JSON(http.StatusOK, card)
	return nil
}

func (h *Handler) agentCard(c *gin.Context) error {
	t, p, err := h.readableProfile(c)
	if err != nil {
		return err
	}
	card := profile.Card(t.Hash, h.BaseURL, p.LLMTxt, p.Version, p.Rules)
	c.JSON(http.StatusOK, h.Profiles.SignedCard(c.Request.Context(), t.ObjectID, card))
	return nil
}
