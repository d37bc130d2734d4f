package http

import (
	"strconv"
	"strings"
	"time"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
)

// mailboxPosition is the cursor of a mailbox page: the last message time and the id of the last
// thread shown, as "<unix ms>|<thread id>".
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
