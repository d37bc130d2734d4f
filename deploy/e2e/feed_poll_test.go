package e2e

import (
	"net/http"
	"strconv"
	"testing"
)

func TestFeedPollingIsPolite(t *testing.T) {
	t.Parallel()
	env := Start(t, WithEnv("RATE_FEED_POLL_INTERVAL", "15m"))
	box, key := env.CreateObject(t, nil)
	enableFeed(t, env, box, key)
	for i := range 3 {
		publish(t, env, box, key, "item "+strconv.Itoa(i))
	}
	path := "/api/feeds/" + box + "/items?limit=2"

	first := env.Do(t, "GET", path, "", nil).Expect(t, http.StatusOK)
	etag := first.Header.Get("ETag")
	if etag == "" || first.Header.Get("Cache-Control") != "public, max-age=900" {
		t.Fatalf("first read: ETag %q, Cache-Control %q; want an ETag and max-age=900", etag, first.Header.Get("Cache-Control"))
	}
	// Conditional polls of an unchanged feed are 304 and never count, however many.
	for range 3 {
		r := env.Send(t, Request{Method: "GET", Path: path, Headers: map[string]string{"If-None-Match": etag}}).Expect(t, http.StatusNotModified)
		if len(r.Body) != 0 || r.Header.Get("ETag") != etag || r.Header.Get("Cache-Control") != "public, max-age=900" {
			t.Fatalf("304 answer: body %q, ETag %q, Cache-Control %q", r.Body, r.Header.Get("ETag"), r.Header.Get("Cache-Control"))
		}
	}
	// A second read with content within 15 minutes is refused, and says when to come back.
	again := env.Do(t, "GET", path, "", nil)
	again.ExpectError(t, http.StatusTooManyRequests, "RATE_LIMITED")
	if s, _ := strconv.Atoi(again.Header.Get("Retry-After")); s < 880 || s > 900 {
		t.Errorf("Retry-After = %q, want about 900 seconds", again.Header.Get("Retry-After"))
	}
	// The feed changed: a conditional poll would get content, which is a second counted read.
	publish(t, env, box, key, "news")
	env.Send(t, Request{Method: "GET", Path: path, Headers: map[string]string{"If-None-Match": etag}}).
		ExpectError(t, http.StatusTooManyRequests, "RATE_LIMITED")

	// History pages after a cursor are not polls; other feeds have their own limit.
	next := Str(t, first.JSON(t), "next_cursor")
	env.Do(t, "GET", path+"&cursor="+next, "", nil).Expect(t, http.StatusOK)
	env.Do(t, "GET", path+"&cursor="+next, "", nil).Expect(t, http.StatusOK)
	// (The network feed is read once the projection holds the creation and the four items, so
	// that it does not change between the reads below; activity is not a polled feed.)
	env.Eventually(t, func() bool {
		return len(env.Do(t, "GET", "/api/activity", "", nil).Expect(t, 200).JSON(t)["items"].([]any)) == 5
	}, "activity shows the creation and the four items")
	for _, other := range []string{"/api/feed", "/feed.txt"} {
		r := env.Do(t, "GET", other, "", nil).Expect(t, http.StatusOK)
		env.Send(t, Request{Method: "GET", Path: other, Headers: map[string]string{"If-None-Match": r.Header.Get("ETag")}}).Expect(t, http.StatusNotModified)
		env.Do(t, "GET", other, "", nil).ExpectError(t, http.StatusTooManyRequests, "RATE_LIMITED")
	}
}
