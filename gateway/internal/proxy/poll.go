package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/gateway/internal/routes"
	"github.com/svcdev/svc/pkg/httpx"
)

// pollKeyCtx carries the poll key of a feed read to the upstream's answer.
type pollKeyCtx struct{}

// pollFirst applies polite polling to a feed route's first page (pages after a cursor are
// history, limited only per IP): a client that read the feed with content less than an interval
// ago and asks again without If-None-Match is refused at once; any other read goes on, and its
// answer is counted by countPoll.
func (g *Gateway) pollFirst(c *gin.Context, r routes.Route) error {
	if !r.Feed || c.Query("cursor") != "" || g.poller.Interval() <= 0 {
		return nil
	}
	key := c.ClientIP() + "|" + c.Request.URL.Path
	ctx := c.Request.Context()
	if c.GetHeader("If-None-Match") == "" {
		if wait := g.poller.Wait(ctx, key); wait > 0 {
			return pollRefused(wait)
		}
	}
	c.Request = c.Request.WithContext(context.WithValue(ctx, pollKeyCtx{}, key))
	return nil
}

func pollRefused(wait time.Duration) *httpx.Error {
	e := httpx.Errorf(http.StatusTooManyRequests, httpx.CodeRateLimited,
		"this feed was read less than a poll interval ago: poll again after Retry-After seconds, with If-None-Match")
	e.RetryAfter = wait
	return e
}

// countPoll counts a feed answer with content against its client and feed; a second one within
// the interval is replaced by 429 with Retry-After. A 304 is not counted.
func (g *Gateway) countPoll(resp *http.Response) {
	key, ok := resp.Request.Context().Value(pollKeyCtx{}).(string)
	if !ok || resp.StatusCode != http.StatusOK {
		return
	}
	wait := g.poller.Count(resp.Request.Context(), key)
	if wait <= 0 {
		return
	}
	_ = resp.Body.Close()
	e := pollRefused(wait)
	body, _ := json.Marshal(httpx.Body{Error: httpx.BodyError{
		Code: e.Code, Message: e.Message, RequestID: httpx.RequestIDFrom(resp.Request.Context()),
	}})
	resp.StatusCode, resp.Status = e.Status, strconv.Itoa(e.Status)+" "+http.StatusText(e.Status)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	for _, h := range []string{"ETag", "Cache-Control", "Last-Modified"} {
		resp.Header.Del(h)
	}
	resp.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	resp.Header.Set("Retry-After", strconv.Itoa(max(1, int(wait.Round(time.Second)/time.Second))))
}
