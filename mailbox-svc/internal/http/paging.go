package http

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/httpx"
)

// Paging bounds of every list (DESIGN §4).
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// pageLimit reads the limit query parameter.
func pageLimit(c *gin.Context) (int, error) {
	raw := c.Query("limit")
	if raw == "" {
		return DefaultLimit, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > MaxLimit {
		return 0, httpx.BadRequest(httpx.CodeInvalidRequest, "limit must be an integer from 1 to %d", MaxLimit)
	}
	return n, nil
}

func badCursor() error { return httpx.BadRequest(httpx.CodeInvalidRequest, "cursor is not valid") }

// messageCursor reads the cursor of a thread's messages: the id of the last message shown.
func messageCursor(c *gin.Context) (string, error) {
	raw := c.Query("cursor")
	if raw == "" {
		return "", nil
	}
	id, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil || !strings.HasPrefix(string(id), "msg_") {
		return "", badCursor()
	}
	return string(id), nil
}

func encodeMessageCursor(id string) *string {
	s := base64.RawURLEncoding.EncodeToString([]byte(id))
	return &s
}

// mailboxCursor reads the cursor of a mailbox: the last message time and id of the last thread
// shown, as "<unix ms>|<thread id>".
func mailboxCursor(c *gin.Context) (*store.MailboxPosition, error) {
	raw := c.Query("cursor")
	if raw == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return nil, badCursor()
	}
	ms, id, ok := strings.Cut(string(b), "|")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || !strings.HasPrefix(id, "thr_") {
		return nil, badCursor()
	}
	return &store.MailboxPosition{LastMessageAt: time.UnixMilli(n).UTC(), ThreadID: id}, nil
}

func encodeMailboxCursor(t *store.Thread) *string {
	s := base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(t.LastMessageAt.UnixMilli(), 10) + "|" + t.ID))
	return &s
}
