package httpx

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/gin-gonic/gin"
)

// KeyCursor is the opaque cursor of a list paged by a key (the last id of a page) in the list
// named scope. Like SeqCursor it carries a check bound to scope, so that a made-up, altered or
// foreign cursor is refused (400) rather than read as a place to start.
func KeyCursor(scope, key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(keyCheck(scope, key) + "." + key))
}

// PageKey reads the limit (1 to MaxLimit, DefaultLimit when absent) and the cursor of a list
// paged by key (a KeyCursor of scope; "" from the start when absent). A cursor that does not
// verify is 400 INVALID_REQUEST.
func PageKey(c *gin.Context, scope string) (limit int, after string, err error) {
	if limit, err = PageLimit(c); err != nil {
		return 0, "", err
	}
	raw := c.Query("cursor")
	if raw == "" {
		return limit, "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	check, key, ok := strings.Cut(string(b), ".")
	if err != nil || !ok || key == "" || check != keyCheck(scope, key) {
		return 0, "", BadRequest(CodeInvalidRequest, "cursor is not valid")
	}
	return limit, key, nil
}

// keyCheck binds a key to its list: the first 8 bytes of SHA-256 over both.
func keyCheck(scope, key string) string {
	sum := sha256.Sum256([]byte("key\x00" + scope + "\x00" + key))
	return base64.RawURLEncoding.EncodeToString(sum[:8])
}
