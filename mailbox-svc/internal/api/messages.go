package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpx"
)

// Headers of idempotent sends.
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	HeaderReplayed       = "Idempotent-Replayed"
)

type sendRequest struct {
	FromHash *string `json:"from_hash" required:"true"`
	ToHash   *string `json:"to_hash" required:"true"`
	Kind     *string `json:"kind" required:"true"`
	Body     *string `json:"body" required:"true"`
	ThreadID *string `json:"thread_id"`
}

type messageResponse struct {
	ID        string `json:"id"`
	ThreadID  string `json:"thread_id"`
	FromHash  string `json:"from_hash"`
	ToHash    string `json:"to_hash"`
	Kind      string `json:"kind"`
	Body      string `json:"body"`
	CreatedAt string `json:"created_at"`
}

func (h *Handler) sendMessage(c *gin.Context) error {
	var req sendRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	d := mailbox.Draft{FromHash: *req.FromHash, ToHash: *req.ToHash, Kind: *req.Kind, Body: *req.Body}
	if req.ThreadID != nil {
		d.ThreadID = *req.ThreadID
	}
	key, err := idempotencyKey(c)
	if err != nil {
		return err
	}
	s, err := h.Sender.Send(c.Request.Context(), httpx.RequestID(c), d, key)
	if err != nil {
		return err
	}
	if s.Replayed {
		c.Header(HeaderReplayed, "true")
	}
	m := s.Message
	c.JSON(http.StatusCreated, messageResponse{
		ID: m.ID, ThreadID: m.ThreadID, FromHash: s.FromHash, ToHash: s.ToHash, Kind: m.Kind, Body: m.Body,
		CreatedAt: clock.Format(m.CreatedAt),
	})
	return nil
}

// idempotencyKey returns the Idempotency-Key header, "" when absent.
func idempotencyKey(c *gin.Context) (string, error) {
	key, present := c.Request.Header[HeaderIdempotencyKey]
	if !present {
		return "", nil
	}
	if len(key) != 1 || !mailbox.ValidIdempotencyKey(key[0]) {
		return "", httpx.BadRequest(httpx.CodeInvalidRequest,
			"%s must be 1 to %d visible ASCII characters", HeaderIdempotencyKey, mailbox.MaxIdempotencyKey)
	}
	return key[0], nil
}
