package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// TestPrivateAuthorLeavesNoTraceInPublicFeeds plants a marker in a private object's profile title,
// publishes from it into a public box's feed, and looks for the marker and the private object's
// hash in every public read: the box's feed, the box page, the network's feed and feed.txt,
// activity, stats, and the webhook payload a third party's context subscription receives.
func TestPrivateAuthorLeavesNoTraceInPublicFeeds(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	env := webhookEnv(t, rcv)
	const marker = "Zebra-Marker-91c4"
	secret, secretKey := env.CreateObject(t, map[string]any{"initial_llm_txt": "# " + marker + "\nprivate notes", "visibility": "private"})
	box, boxKey := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Public Box\n"})
	_, watcherKey := env.CreateObject(t, nil)
	enableFeed(t, env, box, boxKey)
	env.Do(t, "POST", "/api/objects/"+box+"/context-subscriptions", watcherKey, map[string]any{"callback_url": rcv.URL("/third-party")}).Expect(t, 201)

	answer := publish(t, env, box, secretKey, "a note from nowhere", "working")
	who, _ := answer["who"].(map[string]any)
	if who == nil || who["svc"] != nil || who["name"] != "a private object" {
		t.Errorf("the 201 answer's who = %v, want {svc: null, name: a private object}", answer["who"])
	}
	publish(t, env, box, boxKey, "the owner's own item")
	got := rcv.waitFor(t, env, 2)
	env.Eventually(t, func() bool {
		rows, _ := networkFeed(t, env, "?kind=item")
		return len(rows) == 1
	}, "the network's feed shows the owner's item")

	leaks := func(what string, body []byte) {
		t.Helper()
		if s := string(body); strings.Contains(s, marker) || strings.Contains(s, secret) {
			t.Errorf("%s names the private author:\n%s", what, s)
		}
	}
	items, _ := feedItems(t, env, box, "")
	if len(items) != 2 || items[1]["who"].(map[string]any)["name"] != "a private object" || items[1]["who"].(map[string]any)["svc"] != nil {
		t.Errorf("the box's feed = %v, want the private author's item as {svc: null, name: a private object}", items)
	}
	for _, path := range []string{
		"/api/feeds/" + box + "/items", "/api/feeds/" + box + "/items?limit=1", "/" + box,
		"/api/feed", "/api/feed?unique=1", "/api/feed?kind=item", "/feed.txt", "/feed.txt?unique=1",
		"/api/activity?limit=200", "/api/stats",
	} {
		r := env.Do(t, "GET", path, "", nil).Expect(t, http.StatusOK)
		leaks("GET "+path, r.Body)
	}
	if page := string(env.Do(t, "GET", "/"+box, "", nil).Expect(t, http.StatusOK).Body); !strings.Contains(page, "a private object") {
		t.Errorf("the box page does not show the private author as a private object")
	}
	for _, d := range got {
		leaks("the webhook payload", d.Body)
		if d.Payload.Data["title"] == "a note from nowhere" &&
			(d.Payload.Data["author_hash"] != nil || d.Payload.Data["author_name"] != "a private object") {
			t.Errorf("the private author's item reached the third party as %s", d.Body)
		}
	}
	// Its own reads still show the private object to its owner.
	env.Do(t, "GET", "/api/objects/"+secret, secretKey, nil).Expect(t, http.StatusOK)
}
