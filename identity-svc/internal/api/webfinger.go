package api

import "github.com/gin-gonic/gin"

// webfinger answers RFC 7033 queries for public objects. WebFinger is queried from browsers
// too, so any origin may read the answer (RFC 7033 §5).
func (h *handlers) webfinger(c *gin.Context) error {
	jrd, err := h.objects.WebFinger(c.Request.Context(), c.Query("resource"), c.QueryArray("rel"))
	if err != nil {
		return err
	}
	c.Header("Access-Control-Allow-Origin", "*")
	return answer(c, "application/jrd+json", jrd, nil)
}
