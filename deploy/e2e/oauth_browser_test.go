//go:build browser && linux

package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestOAuthConsentInChromium: a person connects an app to a box on the consent page in a real
// Chromium, at phone and desktop size: the page names the app, its origin and the scopes; the
// owner key is pasted, the box (title, hash, verified claims) is shown, Allow sends the browser
// to the app's redirect URI with a code and the issuer. The key is kept nowhere in the browser
// (no cookie, no storage), nothing sticks out of the screen, and axe-core finds no serious or
// critical violation on either step.
func TestOAuthConsentInChromium(t *testing.T) {
	ctx, problems := browser(t)
	axe := axeSource(t)
	got := make(chan url.Values, 1)
	callback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.URL.Query():
		default:
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><html lang="en"><title>Connected</title><main><h1 id="done">Connected</h1></main></html>`))
	}))
	defer callback.Close()
	app := newOAuthAppRedirecting(t, "Desk Agent", callback.URL+"/callback")
	env := startOAuth(t, app)
	hash, key := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Ada Lovelace\n\nAnalyst of engines.\n"})
	env.Eventually(t, func() bool {
		return strings.Contains(string(env.Do(t, "GET", "/", "", nil).Expect(t, 200).Body), "Ada Lovelace")
	}, "the box's title")

	dir := screenshotDir(t)
	check := func(what string, width int64) {
		t.Helper()
		var overflow bool
		var shot []byte
		if err := chromedp.Run(ctx,
			chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth`, &overflow),
			chromedp.FullScreenshot(&shot, 100)); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if overflow {
			t.Errorf("%s: the page is wider than %dpx", what, width)
		}
		path := filepath.Join(dir, "oauth-"+strings.ReplaceAll(what, " ", "-")+".png")
		if err := os.WriteFile(path, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s screenshot: %s", what, path)
		for _, v := range runAxe(t, ctx, axe) {
			msg := fmt.Sprintf("%s: axe %s (%s): %s at %v", what, v.ID, v.Impact, v.Help, v.Nodes)
			if v.Impact == "serious" || v.Impact == "critical" {
				t.Error(msg)
			} else {
				t.Log(msg)
			}
		}
	}
	for _, view := range []struct {
		name          string
		width, height int64
		mobile        bool
	}{{"phone", 390, 844, true}, {"desktop", 1280, 900, false}} {
		emulate := chromedp.EmulateViewport(view.width, view.height)
		if view.mobile {
			emulate = chromedp.EmulateViewport(view.width, view.height, chromedp.EmulateScale(2), chromedp.EmulateMobile)
		}
		var heading, card string
		if err := chromedp.Run(ctx, emulate,
			chromedp.Navigate(authorizeURL(env, app, "read write", newVerifier(), app.redirect)),
			chromedp.WaitVisible("#key", chromedp.ByQuery),
			chromedp.Text("h1", &heading, chromedp.ByQuery),
			chromedp.Text(".card", &card, chromedp.ByQuery)); err != nil {
			t.Fatalf("%s: the consent page: %v", view.name, err)
		}
		if !strings.Contains(heading, "Desk Agent") || !strings.Contains(card, app.srv.URL) || !strings.Contains(card, "write") {
			t.Errorf("%s: the page shows %q / %q, want the app's name, origin and scopes", view.name, heading, card)
		}
		check("consent "+view.name, view.width)

		var box string
		if err := chromedp.Run(ctx,
			chromedp.SendKeys("#key", key, chromedp.ByQuery),
			chromedp.Click(`button[value="identify"]`, chromedp.ByQuery),
			chromedp.WaitVisible(`button[value="allow"]`, chromedp.ByQuery),
			chromedp.Text("main", &box, chromedp.ByQuery)); err != nil {
			t.Fatalf("%s: identify: %v", view.name, err)
		}
		if !strings.Contains(box, hash) || !strings.Contains(box, "Ada Lovelace") || strings.Contains(box, key) {
			t.Errorf("%s: the allow step shows %q, want the box's title and hash and never the key", view.name, box)
		}
		check("allow "+view.name, view.width)
		var stored string
		if err := chromedp.Run(ctx, chromedp.Evaluate(`document.cookie + JSON.stringify(localStorage) + JSON.stringify(sessionStorage)`, &stored)); err != nil {
			t.Fatal(err)
		}
		if stored != "{}{}" {
			t.Errorf("%s: the browser keeps %q, want no cookie and no storage", view.name, stored)
		}

		if err := chromedp.Run(ctx,
			chromedp.Click(`button[value="allow"]`, chromedp.ByQuery),
			chromedp.WaitVisible("#done", chromedp.ByQuery)); err != nil {
			t.Fatalf("%s: allow: %v", view.name, err)
		}
		q := <-got
		if q.Get("code") == "" || q.Get("iss") != env.URL || q.Get("state") != "st-1" {
			t.Errorf("%s: the app got %v, want a code, iss and its state", view.name, q)
		}
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the browser reported: %v", p)
	}
}
