package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
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
