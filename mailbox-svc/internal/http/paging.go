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
	return httpx.PageCursor(c, func(s string) bool { return strings.HasPrefix(s, "msg_") })
}

// mailboxCursor reads the cursor of a mailbox: the last message time and the id of the last
// thread shown, as "<unix ms>|<thread id>" (see mailboxPosition).
func mailboxCursor(c *gin.Context) (*store.MailboxPosition, error) {
	raw, err := httpx.PageCursor(c, func(s string) bool { return parseMailboxPosition(s) != nil })
	if err != nil || raw == "" {
		return nil, err
	}
	return parseMailboxPosition(raw), nil
}

func mailboxPosition(t store.Thread) string {
	return strconv.FormatInt(t.LastMessageAt.UnixMilli(), 10) + "|" + t.ID
}

func parseMailboxPosition(s string) *store.MailboxPosition {
	ms, id, ok := strings.Cut(s, "|")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || !strings.HasPrefix(id, "thr_") {
		return nil
	}
	return &store.MailboxPosition{LastMessageAt: time.UnixMilli(n).UTC(), ThreadID: id}
}
