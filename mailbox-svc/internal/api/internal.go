package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/pkg/contract"
)

// internalThread tells other services who takes part in a thread.
func (h *Handler) internalThread(c *gin.Context) error {
	t, err := h.Threads.Participants(c.Request.Context(), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, t)
	return nil
}

// internalBlocked tells feed-svc and graph-svc whether an object blocks a sender now.
func (h *Handler) internalBlocked(c *gin.Context) error {
	blocked, err := h.Blocks.Blocked(c.Request.Context(), c.Param("id"), c.Param("sender"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, contract.SenderBlocked{Blocked: blocked})
	return nil
}
