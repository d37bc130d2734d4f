package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
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

// TestFeedPollingCannotBeBypassed: the limit keys on the caller and the feed, not the query; a
// made-up cursor or ETag is no way around it; the owner reading its own box is not a stranger.
func TestFeedPollingCannotBeBypassed(t *testing.T) {
	t.Parallel()
	env := Start(t, WithEnv("RATE_FEED_POLL_INTERVAL", "15m"))
	box, key := env.CreateObject(t, nil)
	_, otherKey := env.CreateObject(t, nil)
	enableFeed(t, env, box, key)
	for i := range 3 {
		publish(t, env, box, key, "item "+strconv.Itoa(i))
	}
	path := "/api/feeds/" + box + "/items"
	first := env.Do(t, "GET", path+"?limit=1", "", nil).Expect(t, http.StatusOK)
	// Another query is the same feed to the limit.
	for _, q := range []string{"", "?limit=2", "?limit=1&x=1", "?limit=1&unique=1"} {
		env.Do(t, "GET", path+q, "", nil).ExpectError(t, http.StatusTooManyRequests, "RATE_LIMITED")
	}
	// A made-up ETag is refused at once; the current one is 304 whatever the order of the query.
	env.Send(t, Request{Method: "GET", Path: path + "?limit=1", Headers: map[string]string{"If-None-Match": `"made-up"`}}).
		ExpectError(t, http.StatusTooManyRequests, "RATE_LIMITED")
	env.Send(t, Request{Method: "GET", Path: path + "?limit=1", Headers: map[string]string{"If-None-Match": first.Header.Get("ETag")}}).
		Expect(t, http.StatusNotModified)
	// A made-up cursor, or one of another list, is a 400, never content.
	env.Do(t, "GET", path+"?cursor=bm90LWEtY3Vyc29y", "", nil).ExpectError(t, http.StatusBadRequest, "INVALID_REQUEST")
	act := env.Do(t, "GET", "/api/activity?limit=1", "", nil).Expect(t, http.StatusOK).JSON(t)
	env.Do(t, "GET", path+"?cursor="+Str(t, act, "next_cursor"), "", nil).ExpectError(t, http.StatusBadRequest, "INVALID_REQUEST")
	// A real cursor pages the history.
	next := Str(t, first.JSON(t), "next_cursor")
	page := env.Do(t, "GET", path+"?limit=1&cursor="+next, "", nil).Expect(t, http.StatusOK).JSON(t)
	if items := page["items"].([]any); len(items) != 1 || items[0].(map[string]any)["title"] != "item 1" {
		t.Errorf("history page = %v, want item 1", page)
	}
	// The owner reads its own box as often as it likes; another key is a caller of its own.
	for range 3 {
		env.Do(t, "GET", path, key, nil).Expect(t, http.StatusOK)
	}
	env.Do(t, "GET", path, otherKey, nil).Expect(t, http.StatusOK)
	env.Do(t, "GET", path+"?limit=5", otherKey, nil).ExpectError(t, http.StatusTooManyRequests, "RATE_LIMITED")
}

// TestNetworkReadsPageWithVerifiedCursors pages activity and the network's feed to their ends and
// refuses cursors that were made up or taken from another list.
func TestNetworkReadsPageWithVerifiedCursors(t *testing.T) {
	t.Parallel()
	env := Start(t)
	box, key := env.CreateObject(t, nil)
	enableFeed(t, env, box, key)
	for i := range 5 {
		publish(t, env, box, key, "item "+strconv.Itoa(i))
	}
	env.Eventually(t, func() bool {
		_, total := networkFeed(t, env, "")
		act := env.Do(t, "GET", "/api/activity?limit=200", "", nil).Expect(t, http.StatusOK).JSON(t)
		return total == 6 && len(act["items"].([]any)) == 6
	}, "the network's feed and activity hold the creation and five items")
	for _, route := range []string{"/api/activity", "/api/feed", "/api/feed?kind=item"} {
		sep := "?"
		if strings.Contains(route, "?") {
			sep = "&"
		}
		seen, cursor := 0, ""
		for pages := 0; pages < 10; pages++ {
			q := sep + "limit=2"
			if cursor != "" {
				q += "&cursor=" + cursor
			}
			m := env.Do(t, "GET", route+q, "", nil).Expect(t, http.StatusOK).JSON(t)
			seen += len(m["items"].([]any))
			next, ok := m["next_cursor"].(string)
			if !ok {
				break
			}
			cursor = next
		}
		if want := map[string]int{"/api/activity": 6, "/api/feed": 6, "/api/feed?kind=item": 5}[route]; seen != want {
			t.Errorf("%s: paged %d rows, want %d", route, seen, want)
		}
		env.Do(t, "GET", route+sep+"cursor=MTIzLmFiYw", "", nil).ExpectError(t, http.StatusBadRequest, "INVALID_REQUEST")
	}
	// A cursor of the items list is refused by the whole feed, and the other way round.
	m := env.Do(t, "GET", "/api/feed?kind=item&limit=1", "", nil).Expect(t, http.StatusOK).JSON(t)
	env.Do(t, "GET", "/api/feed?cursor="+Str(t, m, "next_cursor"), "", nil).ExpectError(t, http.StatusBadRequest, "INVALID_REQUEST")
	env.Do(t, "GET", "/feed.txt?kind=item&cursor="+Str(t, m, "next_cursor"), "", nil).Expect(t, http.StatusOK)
}

// TestConcurrentFirstPollsComputeOnce sends many first reads of one feed by one client at once:
// exactly one is answered with content, the others are refused with 429 at the gateway, and
// feed-svc computes the feed exactly once (the claim on the poll interval is taken before the
// read is forwarded, in one step).
func TestConcurrentFirstPollsComputeOnce(t *testing.T) {
	t.Parallel()
	env := Start(t, WithEnv("RATE_FEED_POLL_INTERVAL", "15m"))
	box, key := env.CreateObject(t, nil)
	enableFeed(t, env, box, key)
	publish(t, env, box, key, "item")
	const n = 16
	path := "/api/feeds/" + box + "/items"
	answers := make([]*Response, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			answers[i] = env.Do(t, "GET", path, "", nil)
		}()
	}
	close(start)
	wg.Wait()
	var ok []string
	for _, r := range answers {
		switch r.Status {
		case http.StatusOK:
			ok = append(ok, r.Header.Get("X-Request-Id"))
		case http.StatusTooManyRequests:
			r.ExpectError(t, http.StatusTooManyRequests, "RATE_LIMITED")
			if r.Header.Get("Retry-After") == "" {
				t.Errorf("a refused poll has no Retry-After")
			}
		default:
			t.Fatalf("a first poll answered %d: %s", r.Status, r.Body)
		}
	}
	if len(ok) != 1 {
		t.Fatalf("%d of %d concurrent first polls were answered with content, want exactly 1", len(ok), n)
	}
	// Every request feed-svc served is logged with the gateway's request id: one feed read
	// reached it, the one answered.
	computed := 0
	for line := range strings.Lines(env.Logs()) {
		if strings.Contains(line, `"service":"feed-svc"`) && strings.Contains(line, `"msg":"http request"`) &&
			strings.Contains(line, `"method":"GET","path":"`+path+`"`) {
			computed++
			if !strings.Contains(line, ok[0]) {
				t.Errorf("feed-svc computed a read that was not the one answered: %s", line)
			}
		}
	}
	if computed != 1 {
		t.Fatalf("feed-svc computed the feed %d times for %d concurrent first polls, want 1", computed, n)
	}
}
