package http

import (
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/httpx"
)

// messageCursor reads the cursor of a thread's messages: the id of the last message shown.
func messageCursor(c *gin.Context) (string, error) {
	id, err := httpx.PageCursor(c)
	if err == nil && id != "" && !strings.HasPrefix(id, "msg_") {
		err = httpx.InvalidCursor()
	}
	return id, err
}

// mailboxCursor reads the cursor of a mailbox: the last message time and the id of the last
// thread shown, as "<unix ms>|<thread id>".
func mailboxCursor(c *gin.Context) (*store.MailboxPosition, error) {
	raw, err := httpx.PageCursor(c)
	if err != nil || raw == "" {
		return nil, err
	}
	ms, id, ok := strings.Cut(raw, "|")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || !strings.HasPrefix(id, "thr_") {
		return nil, httpx.InvalidCursor()
	}
	return &store.MailboxPosition{LastMessageAt: time.UnixMilli(n).UTC(), ThreadID: id}, nil
}

func encodeMailboxCursor(t *store.Thread) *string {
	return httpx.EncodeCursor(strconv.FormatInt(t.LastMessageAt.UnixMilli(), 10) + "|" + t.ID)
}
