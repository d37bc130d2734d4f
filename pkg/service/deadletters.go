package service

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
)

// mountDeadLetters adds the operator's routes over the service's dead letters. They sit behind
// the internal token, like every route of a service, and are never routed by the gateway.
func mountDeadLetters(api *gin.RouterGroup, d *events.DeadLetters) {
	g := api.Group("/internal/v1/dead-events")
	g.GET("", func(c *gin.Context) {
		limit := 100
		if v := c.Query("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1000 {
				httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidRequest, "limit must be an integer from 1 to 1000"))
				return
			}
			limit = n
		}
		list, err := d.List(c.Request.Context(), limit)
		if err != nil {
			httpx.Abort(c, err)
			return
		}
		c.JSON(http.StatusOK, gin.H{"dead_events": list})
	})
	g.POST("/:id/replay", func(c *gin.Context) {
		if err := d.Replay(c.Request.Context(), c.Param("id")); err != nil {
			httpx.Abort(c, deadLetterError(err))
			return
		}
		c.JSON(http.StatusOK, gin.H{"ok": true, "replayed": c.Param("id")})
	})
	g.DELETE("/:id", func(c *gin.Context) {
		if err := d.Delete(c.Request.Context(), c.Param("id")); err != nil {
			httpx.Abort(c, deadLetterError(err))
			return
		}
		c.JSON(http.StatusOK, gin.H{"ok": true, "deleted": c.Param("id")})
	})
}

// deadLetterError maps a replay's failure: an unknown id is 404, a handler that still fails 409
// (the dead letter stays, with the new error).
func deadLetterError(err error) error {
	if errors.Is(err, events.ErrUnknownDeadLetter) {
		return httpx.NotFound("dead letter")
	}
	var he *httpx.Error
	if errors.As(err, &he) {
		return err
	}
	return httpx.Conflict(httpx.CodeConflict, "the handler failed again: "+err.Error())
}
