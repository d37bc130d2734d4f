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

// PageParams reads the limit and cursor query parameters of a list (see PageLimit and
// PageCursor).
func PageParams(c *gin.Context, valid func(string) bool) (limit int, cursor string, err error) {
	if limit, err = PageLimit(c); err != nil {
		return 0, "", err
	}
	if cursor, err = PageCursor(c, valid); err != nil {
		return 0, "", err
	}
	return limit, cursor, nil
}

// IDWithPrefix is a cursor check for lists paged by ids of one kind (apikey.NewID(prefix)).
func IDWithPrefix(prefix string) func(string) bool {
	return func(s string) bool { return strings.HasPrefix(s, prefix+"_") }
}

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

// PageCursor reads the opaque cursor query parameter ("" when absent); valid checks the decoded
// value, so that a forged cursor is a 400 rather than a strange query.
func PageCursor(c *gin.Context, valid func(string) bool) (string, error) {
	raw := c.Query("cursor")
	if raw == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil || !valid(string(b)) {
		return "", BadRequest(CodeInvalidRequest, "cursor is not valid")
	}
	return string(b), nil
}

// Page trims a list read with limit+1 entries to limit, and returns the cursor of the next page
// (the key of the last entry kept), or nil on the last page.
func Page[T any](list []T, limit int, key func(T) string) ([]T, *string) {
	if len(list) <= limit {
		return list, nil
	}
	list = list[:limit]
	next := base64.RawURLEncoding.EncodeToString([]byte(key(list[limit-1])))
	return list, &next
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
