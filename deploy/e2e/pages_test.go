package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// TestPagesShowBadgesAndNetwork: a box page shows its verified claims and custom hash as badges
// once it has them, and the home page lists the newest public boxes and the network's feed (each
// item's box named by its title), never a private box.
func TestPagesShowBadgesAndNetwork(t *testing.T) {
	t.Parallel()
	d, p := startDNS(t), startPages(t)
	env := claimsEnv(t, d, p)
	box, key := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Grace Hopper\n\nCompilers.\n"})
	env.CreateObject(t, map[string]any{"initial_llm_txt": "# Hidden Person\n", "visibility": "private"})
	before := string(env.Do(t, "GET", "/"+box, "", nil).Expect(t, http.StatusOK).Body)
	if strings.Contains(before, `class="badge badge-verified"`) || strings.Contains(before, `id="badge-custom-hash"`) || !strings.Contains(before, "Unclaimed") {
		t.Errorf("a new box shows badges it has not earned")
	}
	c := createClaim(t, env, key, box, "domain", "hopper.test")
	d.set("hopper.test", "svc-verification="+c.Challenge.Token)
	if v := verifyClaim(t, env, key, c.ID); v.Status != "verified" {
		t.Fatalf("verify: %+v", v)
	}
	box = Str(t, env.Do(t, "POST", "/api/objects/claim-custom-hash", key,
		map[string]any{"username": "grace", "payment_reference": issueVoucher()}).Expect(t, 200).JSON(t), "hash")
	enableFeed(t, env, box, key)
	publish(t, env, box, key, "Found a moth in the relay", "done")
	env.Eventually(t, func() bool {
		html := string(env.Do(t, "GET", "/"+box, "", nil).Expect(t, http.StatusOK).Body)
		return strings.Contains(html, "Domain verified: <strong>hopper.test</strong>") && strings.Contains(html, `id="badge-custom-hash"`)
	}, "the box page's badges")
	if html := string(env.Do(t, "GET", "/"+box, "", nil).Expect(t, http.StatusOK).Body); strings.Contains(html, "Unclaimed") {
		t.Error("a box with a verified claim is also shown as unclaimed")
	}
	env.Eventually(t, func() bool {
		home := env.Do(t, "GET", "/", "", nil).Expect(t, http.StatusOK)
		html := string(home.Body)
		if strings.Contains(html, "Hidden Person") {
			t.Fatal("the home page lists a private box")
		}
		return strings.HasPrefix(home.Header.Get("Content-Type"), "text/html") &&
			strings.Contains(html, `href="`+env.URL+`/svc_grace">Grace Hopper</a>`) && strings.Contains(html, "Found a moth in the relay") &&
			// the feed's row names its box by title, not by hash
			strings.Contains(html, `in <a href="`+env.URL+`/svc_grace">Grace Hopper</a>`)
	}, "the home page's lists")
}
