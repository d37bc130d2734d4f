package httpx

import (
	"encoding/base64"
	"strconv"

	"github.com/gin-gonic/gin"
)

// Paging bounds of every list (DESIGN §4).
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// PageLimit reads a list's limit query parameter: DefaultLimit when absent, else an integer from
// 1 to MaxLimit.
func PageLimit(c *gin.Context) (int, error) {
	raw := c.Query("limit")
	if raw == "" {
		return DefaultLimit, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > MaxLimit {
		return 0, BadRequest(CodeInvalidRequest, "limit must be an integer from 1 to %d", MaxLimit)
	}
	return n, nil
}

// PageCursor reads a list's opaque cursor query parameter and returns what it encodes, or ""
// when there is none. A cursor that is not one of EncodeCursor's is 400.
func PageCursor(c *gin.Context) (string, error) {
	raw := c.Query("cursor")
	if raw == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil || len(b) == 0 {
		return "", InvalidCursor()
	}
	return string(b), nil
}

// InvalidCursor is the 400 of a cursor that does not encode a position of the list.
func InvalidCursor() *Error { return BadRequest(CodeInvalidRequest, "cursor is not valid") }

// EncodeCursor makes the opaque next_cursor of a list from a position (a sortable id).
func EncodeCursor(position string) *string {
	s := base64.RawURLEncoding.EncodeToString([]byte(position))
	return &s
}
