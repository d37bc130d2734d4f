package httpx

import "github.com/gin-gonic/gin"

// HandlerFunc is a handler that returns its error instead of rendering it: decode, call a use
// case, respond. Handle renders the error.
type HandlerFunc func(c *gin.Context) error

// Handle adapts h to Gin: an error h returns is rendered once, in the error shape, by Abort.
func Handle(h HandlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := h(c); err != nil {
			Abort(c, err)
		}
	}
}
