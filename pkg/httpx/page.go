package httpx

import (
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
)

// Paging bounds of every list (DESIGN §4).
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// PageLimit reads the limit query parameter: 1 to MaxLimit, DefaultLimit when absent.
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

// SeqCursor is the opaque cursor of position seq (an offset, a version) in the list named scope.
// It carries a check bound to scope, so that a cursor made up, altered or taken from
// another list is refused rather than read as a position.
func SeqCursor(scope string, seq int64) string {
	raw := strconv.FormatInt(seq, 10) + "." + cursorCheck(scope, seq)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// PageSeq reads the limit (1 to MaxLimit, DefaultLimit when absent) and the cursor of a list
// paged by position (a SeqCursor of scope; 0, the newest page, when absent). A cursor that does
// not verify is 400 INVALID_REQUEST.
func PageSeq(c *gin.Context, scope string) (limit int, before int64, err error) {
	if limit, err = PageLimit(c); err != nil {
		return 0, 0, err
	}
	raw := c.Query("cursor")
	if raw == "" {
		return limit, 0, nil
	}
	bad := BadRequest(CodeInvalidRequest, "cursor is not valid")
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return 0, 0, bad
	}
	pos, check, ok := strings.Cut(string(b), ".")
	seq, perr := strconv.ParseInt(pos, 10, 64)
	if !ok || perr != nil || seq < 1 || check != cursorCheck(scope, seq) {
		return 0, 0, bad
	}
	return limit, seq, nil
}

// cursorCheck binds a position to its list: the first 8 bytes of SHA-256 over both.
func cursorCheck(scope string, seq int64) string {
	sum := sha256.Sum256([]byte(scope + "\x00" + strconv.FormatInt(seq, 10)))
	return base64.RawURLEncoding.EncodeToString(sum[:8])
}
