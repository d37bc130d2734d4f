package proxy

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/gateway/internal/routes"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
)

// pollKeyCtx carries the poll claim of a feed read to the upstream's answer.
type pollKeyCtx struct{}

// pollClaim is a feed read's claim on its poll interval: its key and the claim's token.
type pollClaim struct{ key, token string }

// pollFirst applies polite polling to a feed read before anything is forwarded, and reports
// whether it answered the request itself. The limit is one read with content per caller and
// feed per interval: the caller is the key's object (else the client's address) and the feed is
// the route with its box, never the query, so that varying limit, kind or any other parameter
// cannot get around it. Without any store work:
//   - a revalidation holding the feed's current validator is answered 304 here (never counted);
//   - an early read is refused with 429 and Retry-After here, also when it carries an
//     If-None-Match that is not current (a bogus one is not sent on for feed-svc to compute);
//   - any other read claims the interval before it is forwarded, check and mark in one step, so
//     that of concurrent first reads exactly one is computed; the claim is given back when the
//     answer has no content (see releasePoll).
//
// The owner reading its own box with its own key is not a stranger polling: not limited. Pages
// after a cursor are history, not polls: feed-svc checks the cursor before any store read, so a
// forged one is a 400 and never content.
func (g *Gateway) pollFirst(c *gin.Context, r routes.Route, p *authn.Principal, t *authn.Target) (bool, error) {
	if !r.Feed || g.poller.Interval() <= 0 || (p != nil && t != nil && p.ObjectID == t.ObjectID) || c.Query("cursor") != "" {
		return false, nil
	}
	ctx := c.Request.Context()
	feed := httpx.NetworkFeed
	if t != nil {
		feed = httpx.BoxFeed(t.ObjectID)
	}
	if g.notModifiedFeed(c, feed, t) {
		return true, nil
	}
	caller := "ip:" + c.ClientIP()
	if p != nil {
		caller = "obj:" + p.ObjectID
	}
	key := caller + "|" + r.Method + " " + r.Path + "|" + feed
	token, wait := g.poller.Claim(ctx, key)
	if wait > 0 {
		return false, pollRefused(wait)
	}
	c.Request = c.Request.WithContext(context.WithValue(ctx, pollKeyCtx{}, pollClaim{key: key, token: token}))
	return false, nil
}

// notModifiedFeed answers 304 when the request's If-None-Match holds the current validator of
// the read; it never makes a validator.
func (g *Gateway) notModifiedFeed(c *gin.Context, feed string, t *authn.Target) bool {
	header := c.GetHeader("If-None-Match")
	if header == "" || g.FeedTags == nil {
		return false
	}
	etag, err := g.FeedTags.ETag(c.Request.Context(), feed, c.Request, false)
	if err != nil || httpx.NoneMatch(header, etag) {
		return false
	}
	scope := "public"
	if t != nil && t.Visibility == contract.Private {
		scope = "private"
	}
	c.Header("ETag", etag)
	c.Header("Cache-Control", scope+", max-age="+strconv.Itoa(int(g.poller.Interval()/time.Second)))
	c.AbortWithStatus(http.StatusNotModified)
	return true
}

func pollRefused(wait time.Duration) *httpx.Error {
	e := httpx.Errorf(http.StatusTooManyRequests, httpx.CodeRateLimited,
		"this feed was read less than a poll interval ago: poll again after Retry-After seconds, with If-None-Match")
	e.RetryAfter = wait
	return e
}

// releasePoll gives back the poll claim of a feed read answered without content (a 304, an
// error, an upstream that did not answer), so that only a read with content counts.
func (g *Gateway) releasePoll(r *http.Request, status int) {
	claim, ok := r.Context().Value(pollKeyCtx{}).(pollClaim)
	if !ok || status == http.StatusOK {
		return
	}
	// The client may be gone; the claim is given back all the same.
	g.poller.Release(context.WithoutCancel(r.Context()), claim.key, claim.token)
}
