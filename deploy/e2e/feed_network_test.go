package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// networkFeed reads GET /api/feed with query and returns its rows and total.
func networkFeed(t testing.TB, env *Env, query string) ([]map[string]any, int) {
	t.Helper()
	m := env.Do(t, "GET", "/api/feed"+query, "", nil).Expect(t, http.StatusOK).JSON(t)
	var rows []map[string]any
	for _, r := range m["items"].([]any) {
		rows = append(rows, r.(map[string]any))
	}
	return rows, int(Num(t, m, "total"))
}

func stats(t testing.TB, env *Env) map[string]any {
	t.Helper()
	return env.Do(t, "GET", "/api/stats", "", nil).Expect(t, http.StatusOK).JSON(t)
}

// hashesOf lists the box hashes of rows, in order.
func hashesOf(rows []map[string]any) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r["hash"].(string))
	}
	return out
}

func TestNetworkFeedUniqueTextAndPrivacy(t *testing.T) {
	t.Parallel()
	env := Start(t)
	a, aKey := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Alpha\n"})
	b, _ := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Beta\n"})
	secret, secretKey := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Secret\n", "visibility": "private"})
	enableFeed(t, env, a, aKey)
	enableFeed(t, env, secret, secretKey)
	first := publish(t, env, a, aKey, "first from alpha", "working")
	publish(t, env, a, secretKey, "the private author writes") // a private author appears in no network read
	publish(t, env, secret, secretKey, "inside the private box")
	publish(t, env, a, aKey, "second from alpha", "done")

	// A box's newest row moves after its rows are counted in: the unique read is waited for too.
	env.Eventually(t, func() bool {
		_, total := networkFeed(t, env, "")
		unique, _ := networkFeed(t, env, "?unique=1")
		return total == 4 && len(unique) > 0 && unique[0]["title"] == "second from alpha"
	}, "the network feed shows alpha's two items and the two public objects' creation")
	rows, _ := networkFeed(t, env, "")
	if got := fmt.Sprint(hashesOf(rows)); got != fmt.Sprint([]string{a, a, b, a}) {
		t.Errorf("rows by box = %s, want alpha's items newest first, then beta's and alpha's creation", got)
	}
	if rows[0]["kind"] != "item" || rows[0]["title"] != "second from alpha" || rows[3]["kind"] != "new_svc" {
		t.Errorf("rows = %v", rows)
	}
	for _, r := range rows {
		if strings.Contains(MustJSON(r), secret) || strings.Contains(MustJSON(r), "private") {
			t.Errorf("a private object shows in the network feed: %v", r)
		}
	}

	unique, total := networkFeed(t, env, "?unique=1")
	if total != 2 || fmt.Sprint(hashesOf(unique)) != fmt.Sprint([]string{a, b}) || unique[0]["title"] != "second from alpha" {
		t.Errorf("unique=1 gave %v (total %d), want one row per box, its newest", unique, total)
	}
	created, total := networkFeed(t, env, "?kind=new_svc")
	if total != 2 || created[0]["hash"] != b || created[0]["who"].(map[string]any)["name"] != "Beta" {
		t.Errorf("kind=new_svc gave %v (total %d), want beta's then alpha's creation", created, total)
	}
	env.Do(t, "GET", "/api/feed?kind=nope", "", nil).ExpectError(t, 400, "INVALID_KIND")

	// Paging the whole history with cursors.
	page1 := env.Do(t, "GET", "/api/feed?limit=3", "", nil).Expect(t, 200).JSON(t)
	page2 := env.Do(t, "GET", "/api/feed?limit=3&cursor="+Str(t, page1, "next_cursor"), "", nil).Expect(t, 200).JSON(t)
	if len(page2["items"].([]any)) != 1 || page2["next_cursor"] != nil {
		t.Errorf("second page = %v, want the one remaining row and no cursor", page2)
	}

	text := env.Do(t, "GET", "/feed.txt?kind=created", "", nil).Expect(t, 200)
	lines := strings.Split(strings.TrimSpace(string(text.Body)), "\n")
	var rowsTxt []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "#") {
			rowsTxt = append(rowsTxt, l)
		}
	}
	if len(rowsTxt) != 2 || !strings.Contains(rowsTxt[0], "\tcreated\t"+b+"\t") || strings.Contains(string(text.Body), secret) {
		t.Errorf("feed.txt?kind=created =\n%s\nwant beta's then alpha's creation, and no private object", text.Body)
	}
	uniqueTxt := string(env.Do(t, "GET", "/feed.txt?unique=1", "", nil).Expect(t, 200).Body)
	alphaRows := 0
	for _, l := range strings.Split(uniqueTxt, "\n") {
		if f := strings.Split(l, "\t"); len(f) > 2 && f[2] == a {
			alphaRows++
		}
	}
	if alphaRows != 1 || !strings.Contains(uniqueTxt, "second from alpha") {
		t.Errorf("feed.txt?unique=1 =\n%s\nwant one row for alpha, its newest", uniqueTxt)
	}

	// Hiding an item takes it out of the network feed too.
	env.Do(t, "DELETE", "/api/feeds/"+a+"/items/"+Str(t, first, "id"), aKey, nil).Expect(t, 200)
	_, total = networkFeed(t, env, "?kind=item")
	if total != 1 {
		t.Errorf("after hiding, kind=item total = %d, want 1", total)
	}

	// Activity: public objects only, newest first, paged.
	act := env.Do(t, "GET", "/api/activity?limit=200", "", nil).Expect(t, 200).JSON(t)
	for _, it := range act["items"].([]any) {
		if it.(map[string]any)["hash"] == secret {
			t.Errorf("activity shows the private object: %v", it)
		}
	}
	if n := len(act["items"].([]any)); n < 4 {
		t.Errorf("activity has %d entries, want at least the two creations and two items", n)
	}
	// The private box's own feed is the owner's only.
	env.Do(t, "GET", "/api/feeds/"+secret+"/items", "", nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "GET", "/api/feeds/"+secret+"/items", secretKey, nil).Expect(t, 200)
}

func TestNetworkFeedFollowsHashChanges(t *testing.T) {
	t.Parallel()
	env := Start(t)
	old, key := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Renamed\n"})
	enableFeed(t, env, old, key)
	publish(t, env, old, key, "before the rename")
	env.Do(t, "POST", "/api/objects/claim-custom-hash", key, map[string]any{"username": "renamed_box", "payment_reference": issueVoucher()}).Expect(t, 200)
	env.Eventually(t, func() bool {
		rows, _ := networkFeed(t, env, "")
		return len(rows) == 2 && rows[0]["hash"] == "svc_renamed_box" && rows[1]["hash"] == "svc_renamed_box" &&
			rows[0]["who"].(map[string]any)["svc"] == "svc_renamed_box"
	}, "every row names the box and the author by the new hash")
	items, _ := feedItems(t, env, "svc_renamed_box", "")
	if len(items) != 1 || items[0]["who"].(map[string]any)["svc"] != "svc_renamed_box" {
		t.Errorf("feed items = %v, want the author named by its new hash", items)
	}
}

func TestStatsCountEveryEventExactly(t *testing.T) {
	t.Parallel()
	env := Start(t)
	to, toKey := env.CreateObject(t, nil)
	from, _ := env.CreateObject(t, nil)
	_, hiddenKey := env.CreateObject(t, map[string]any{"visibility": "private"})
	_ = hiddenKey
	const sends = 24
	var wg sync.WaitGroup
	for i := range sends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sendMessage(t, env, from, to, "", fmt.Sprintf("message %d", i))
		}()
	}
	wg.Wait()

	// claims-svc publishes claim.verified; the count follows its events (redelivery included).
	toID := env.Internal(t, "identity-svc", "GET", "/internal/v1/resolve/"+to)["object_id"].(string)
	ev := events.MustNew(events.TopicClaims, events.ClaimVerified, toID, to, "",
		contract.ClaimVerifiedData{ClaimID: "clm_1", ProofType: "domain", ClaimedTarget: "example.com", VerifiedAt: "2026-01-01T00:00:00Z"})
	p := events.NewProducer(env.Brokers, env.Name+".")
	defer p.Close()
	for range 2 {
		if err := p.Publish(context.Background(), ev); err != nil {
			t.Fatalf("publish claim.verified: %v", err)
		}
	}
	want := map[string]float64{"identifier_count": 2, "message_count": sends, "verified_claims_count": 1}
	env.Eventually(t, func() bool {
		s := stats(t, env)
		return s["identifier_count"] == want["identifier_count"] && s["message_count"] == want["message_count"] &&
			s["verified_claims_count"] == want["verified_claims_count"]
	}, "stats count the two public objects, every message and the claim once")

	// Analytics: the owner's daily counts.
	enableFeed(t, env, to, toKey)
	publish(t, env, to, toKey, "one item")
	env.Do(t, "GET", "/api/objects/"+to+"/analytics?range=30d", "", nil).ExpectError(t, 401, "UNAUTHORIZED")
	env.Do(t, "GET", "/api/objects/"+to+"/analytics?range=forever", toKey, nil).ExpectError(t, 400, "INVALID_REQUEST")
	env.Eventually(t, func() bool {
		a := env.Do(t, "GET", "/api/objects/"+to+"/analytics?range=7d", toKey, nil).Expect(t, 200).JSON(t)
		totals := a["totals"].(map[string]any)
		series := a["series"].([]any)
		today := series[len(series)-1].(map[string]any)
		return a["range"] == "7d" && len(series) == 7 && totals["messages"] == float64(sends) &&
			totals["feed_items"] == float64(1) && totals["verified_claims"] == float64(1) && today["messages"] == float64(sends)
	}, "analytics count the object's messages, items and claims, today last")
}
