package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestContextSubscriptions lets any object watch a public box's context updates with its own
// key; only the creator deletes it; a private box cannot be watched by others.
func TestContextSubscriptions(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	env := webhookEnv(t, rcv)
	watcher, watcherKey := env.CreateObject(t, nil)
	_, strangerKey := env.CreateObject(t, nil)
	box, boxKey := env.CreateObject(t, nil)
	private, privateKey := env.CreateObject(t, map[string]any{"visibility": "private"})
	path := "/api/objects/" + box + "/context-subscriptions"

	created := env.Do(t, "POST", path, watcherKey, map[string]any{"callback_url": rcv.URL("/watch")}).Expect(t, 201).JSON(t)
	sub := created["subscription"].(map[string]any)
	id, secret := Str(t, sub, "id"), Str(t, sub, "secret")
	if sub["hash"] != box || fmt.Sprint(sub["events"]) != "[context_updated]" {
		t.Errorf("subscription = %v", sub)
	}
	env.Do(t, "POST", path, watcherKey, map[string]any{"callback_url": rcv.URL("/"), "events": []string{"message"}}).ExpectError(t, 400, "INVALID_KIND")
	env.Do(t, "POST", path, watcherKey, map[string]any{"events": []string{"context_updated"}}).ExpectError(t, 400, "MISSING_FIELD")
	env.Do(t, "POST", path, watcherKey, map[string]any{"callback_url": "http://example.com/"}).ExpectError(t, 400, "INVALID_URL")
	env.Do(t, "POST", path, "", map[string]any{"callback_url": rcv.URL("/")}).ExpectError(t, 401, "UNAUTHORIZED")
	// A private box: 404 to others, exactly as an unknown one; its owner may watch it.
	privatePath := "/api/objects/" + private + "/context-subscriptions"
	env.Do(t, "POST", privatePath, watcherKey, map[string]any{"callback_url": rcv.URL("/")}).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "POST", "/api/objects/svc_unknownunknownunkn/context-subscriptions", watcherKey, map[string]any{"callback_url": rcv.URL("/")}).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "POST", privatePath, privateKey, map[string]any{"callback_url": rcv.URL("/own")}).Expect(t, 201)
	// A context subscription is not the box owner's webhook.
	env.Do(t, "GET", "/api/objects/"+box+"/webhooks/"+id, boxKey, nil).ExpectError(t, 404, "NOT_FOUND")

	env.Do(t, "PUT", "/api/objects/"+box+"/llm.txt", boxKey, map[string]any{"body": "# Box\n\nnow with news"}).Expect(t, 200)
	sendMessage(t, env, watcher, box, "", "messages are not context updates")
	env.Do(t, "PUT", "/api/objects/"+private+"/llm.txt", privateKey, map[string]any{"body": "# Private"}).Expect(t, 200)
	got := rcv.waitFor(t, env, 2)
	time.Sleep(300 * time.Millisecond) // let a wrongly fanned-out message show up
	byPath := map[string][]received{}
	for _, r := range rcv.Got() {
		byPath[r.Path] = append(byPath[r.Path], r)
	}
	if len(byPath["/watch"]) != 1 || len(byPath["/own"]) != 1 || len(rcv.Got()) != 2 {
		t.Fatalf("deliveries by path: /watch %d, /own %d, all %d (want 1, 1, 2)", len(byPath["/watch"]), len(byPath["/own"]), len(got))
	}
	w := byPath["/watch"][0]
	verify(t, secret, w)
	if w.Payload.Type != "context_updated" || w.Payload.Data["hash"] != box || w.Payload.Data["version"] != float64(2) {
		t.Errorf("watched update: %s", w.Body)
	}

	env.Do(t, "DELETE", path+"?subscription_id="+id, strangerKey, nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "DELETE", path, watcherKey, nil).ExpectError(t, 400, "MISSING_FIELD")
	del := env.Do(t, "DELETE", path+"?subscription_id="+id, watcherKey, nil).Expect(t, 200).JSON(t)
	if del["ok"] != true || del["deleted"] != id {
		t.Errorf("delete = %v", del)
	}
	env.Do(t, "DELETE", path+"?subscription_id="+id, watcherKey, nil).ExpectError(t, 404, "NOT_FOUND")
}

// TestWebhookRefusesPrivateAddresses runs without OUTBOUND_ALLOW_PRIVATE: literal private and
// metadata addresses are refused at creation, and a host name resolving to loopback is refused
// when dialled, on every attempt, so it is never reached.
func TestWebhookRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	env := Start(t, WithEnv("WEBHOOK_RETRY_SCHEDULE", "200ms"), WithEnv("WEBHOOK_RETRY_JITTER", "0"),
		WithEnv("WEBHOOK_POLL_INTERVAL", "100ms"), WithEnv("WEBHOOK_TIMEOUT", "2s"), WithEnv("WEBHOOK_CLAIM_LEASE", "3s"))
	hash, key := env.CreateObject(t, nil)
	sender, _ := env.CreateObject(t, nil)
	base := "/api/objects/" + hash + "/webhooks"
	for _, u := range []string{srv.URL, "https://[::1]" + port, "https://10.0.0.1/", "https://169.254.169.254/", "https://user:pw@example.com/", "ftp://example.com/"} {
		env.Do(t, "POST", base, key, map[string]any{"callback_url": u}).ExpectError(t, 400, "INVALID_URL")
		env.Do(t, "POST", "/api/objects/"+hash+"/context-subscriptions", key, map[string]any{"callback_url": u}).ExpectError(t, 400, "INVALID_URL")
	}
	id, _ := createWebhook(t, env, hash, key, map[string]any{"callback_url": "https://localhost" + port + "/", "events": []string{"message"}})
	sendMessage(t, env, sender, hash, "", "to loopback")
	d := finalDelivery(t, env, hash, key, id)
	attempts := d["attempts"].([]any)
	if d["status"] != "failed" || len(attempts) != 2 {
		t.Fatalf("delivery to loopback = %v, want two refused attempts then failed", d)
	}
	for _, a := range attempts {
		if msg, _ := a.(map[string]any)["error"].(string); !strings.Contains(msg, "refused") {
			t.Errorf("attempt error %q does not say the address was refused", msg)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback receiver was reached %d times", n)
	}
}

// TestContextSubscriptionSeesFeedItems delivers a feed item published to a watched box as a
// context_updated event that names the change and carries the item, never the author's internal id.
func TestContextSubscriptionSeesFeedItems(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	env := webhookEnv(t, rcv)
	_, watcherKey := env.CreateObject(t, nil)
	author, authorKey := env.CreateObject(t, nil)
	box, boxKey := env.CreateObject(t, nil)
	enableFeed(t, env, box, boxKey)
	sub := env.Do(t, "POST", "/api/objects/"+box+"/context-subscriptions", watcherKey, map[string]any{"callback_url": rcv.URL("/news")}).
		Expect(t, 201).JSON(t)["subscription"].(map[string]any)

	item := publish(t, env, box, authorKey, "shipped", "done")
	got := rcv.waitFor(t, env, 1)[0]
	verify(t, Str(t, sub, "secret"), got)
	d := got.Payload.Data
	if got.Payload.Type != "context_updated" || d["change"] != "feed_item_published" || d["hash"] != box ||
		d["item_id"] != item["id"] || d["title"] != "shipped" || d["author_hash"] != author || fmt.Sprint(d["tags"]) != "[done]" {
		t.Fatalf("feed item delivery: %s", got.Body)
	}
	if _, ok := d["author_object_id"]; ok {
		t.Errorf("the payload carries the author's internal id: %s", got.Body)
	}
}

// TestContextSubscriptionListKeepsWatchersPrivate: the box owner lists the context
// subscriptions to its box by the watcher's hash and the host they deliver to, never the rest of
// a watcher's callback URL nor an internal object id; one watcher's subscriptions to one box stop
// at 10 (409 QUOTA_EXCEEDED in the error shape), leaving the box's other places to others.
func TestContextSubscriptionListKeepsWatchersPrivate(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	env := webhookEnv(t, rcv)
	box, boxKey := env.CreateObject(t, nil)
	watcher, watcherKey := env.CreateObject(t, nil)
	_, otherKey := env.CreateObject(t, nil)
	watcherID := env.Internal(t, "identity-svc", "GET", "/internal/v1/resolve/"+watcher)["object_id"].(string)
	boxID := env.Internal(t, "identity-svc", "GET", "/internal/v1/resolve/"+box)["object_id"].(string)
	path := "/api/objects/" + box + "/context-subscriptions"

	for i := range 10 {
		env.Do(t, "POST", path, watcherKey, map[string]any{"callback_url": rcv.URL(fmt.Sprintf("/private-path-%d?token=watcher-token-%d", i, i))}).Expect(t, 201)
	}
	env.Do(t, "POST", path, watcherKey, map[string]any{"callback_url": rcv.URL("/eleventh")}).ExpectError(t, 409, "QUOTA_EXCEEDED")
	env.Do(t, "POST", path, otherKey, map[string]any{"callback_url": rcv.URL("/other")}).Expect(t, 201)

	list := env.Do(t, "GET", path, boxKey, nil).Expect(t, 200)
	body := string(list.Body)
	for _, secret := range []string{"private-path", "watcher-token", "/other", watcherID, boxID, "callback_url", "watcher_id", "secret"} {
		if strings.Contains(body, secret) {
			t.Errorf("the owner's list shows %q: %s", secret, body)
		}
	}
	host := strings.TrimPrefix(rcv.URL(""), "https://")
	subs := list.JSON(t)["subscriptions"].([]any)
	if len(subs) != 11 {
		t.Fatalf("the owner lists %d subscriptions, want 11", len(subs))
	}
	byWatcher := map[string]int{}
	for _, s := range subs {
		m := s.(map[string]any)
		if m["callback_host"] != host || m["id"] == "" || fmt.Sprint(m["events"]) != "[context_updated]" {
			t.Errorf("listed subscription = %v; want the host %s", m, host)
		}
		byWatcher[fmt.Sprint(m["watcher_hash"])]++
	}
	if byWatcher[watcher] != 10 || len(byWatcher) != 2 {
		t.Errorf("subscriptions by watcher hash: %v; want 10 of %s and one other", byWatcher, watcher)
	}
}
