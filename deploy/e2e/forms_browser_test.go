//go:build browser && linux

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestFormsInChromium: a person creates a box on the home page and sends a message from a box
// page, in a real Chromium at phone and desktop size: the new box's owner key is shown once, with
// a warning and a copy button, and works; the message reaches the box's mailbox. Screenshots of
// each page in its answered state, and no serious or critical finding of axe-core.
func TestFormsInChromium(t *testing.T) {
	ctx, problems := browser(t)
	axe := axeSource(t)
	env := Start(t)
	sender, _ := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Charles Babbage\n"})
	dir := screenshotDir(t)

	check := func(what string) {
		t.Helper()
		var shot []byte
		if err := chromedp.Run(ctx, chromedp.FullScreenshot(&shot, 100)); err != nil {
			t.Fatalf("%s: screenshot: %v", what, err)
		}
		path := filepath.Join(dir, strings.ReplaceAll(what, " ", "-")+".png")
		if err := os.WriteFile(path, shot, 0o644); err != nil {
			t.Fatalf("save %s: %v", path, err)
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
		name := "Grace Hopper " + view.name
		var hash, key, warning, copied string
		err := chromedp.Run(ctx, emulate,
			chromedp.Navigate(env.URL+"/"),
			chromedp.WaitVisible("#create-form", chromedp.ByQuery),
			chromedp.SendKeys("#box-name", name, chromedp.ByQuery),
			chromedp.SendKeys("#box-about", "Compilers and COBOL.", chromedp.ByQuery),
			chromedp.Click(`#create-form button[type="submit"]`, chromedp.ByQuery),
			chromedp.WaitVisible("#created", chromedp.ByQuery),
			chromedp.Text("#new-hash", &hash, chromedp.ByQuery),
			chromedp.Value("#new-key", &key, chromedp.ByQuery),
			chromedp.Text("#key-warning", &warning, chromedp.ByQuery),
			chromedp.Click("#copy-key", chromedp.ByQuery),
			chromedp.Poll(`document.getElementById('copy-status').textContent !== ''`, nil),
			chromedp.Text("#copy-status", &copied, chromedp.ByQuery),
		)
		if err != nil {
			t.Fatalf("%s: create a box on the home page: %v", view.name, err)
		}
		if !strings.HasPrefix(hash, "svc_") || !strings.HasPrefix(key, "svc_sk_") {
			t.Fatalf("%s: the page shows the box %q with the key %q", view.name, hash, key)
		}
		if !strings.Contains(warning, "shown only once") || !strings.Contains(warning, "Keep it secret") {
			t.Errorf("%s: the key's warning reads %q", view.name, warning)
		}
		if !strings.HasPrefix(copied, "Copied") {
			t.Errorf("%s: the copy button answered %q", view.name, copied)
		}
		who := env.Do(t, "GET", "/api/whoami", key, nil).Expect(t, 200).JSON(t)
		if who["hash"] != hash || who["owner_key"] != true {
			t.Fatalf("%s: the key shown is not the new box's owner key: %v", view.name, who)
		}
		profile := string(env.Do(t, "GET", "/api/objects/"+hash+"/llm.txt", "", nil).Expect(t, 200).Body)
		if !strings.Contains(profile, "# "+name) || !strings.Contains(profile, "Compilers and COBOL.") {
			t.Errorf("%s: the new box's profile is %q", view.name, profile)
		}
		check("create " + view.name)

		var status string
		err = chromedp.Run(ctx,
			chromedp.Navigate(env.URL+"/"+hash),
			chromedp.WaitVisible("#send-form", chromedp.ByQuery),
			chromedp.SendKeys("#send-from", sender, chromedp.ByQuery),
			chromedp.SendKeys("#send-body", "Hello from a browser ("+view.name+")", chromedp.ByQuery),
			chromedp.Click(`#send-form button[type="submit"]`, chromedp.ByQuery),
			chromedp.Poll(`document.getElementById('send-status').textContent.startsWith('Sent')`, nil),
			chromedp.Text("#send-status", &status, chromedp.ByQuery),
		)
		if err != nil {
			t.Fatalf("%s: send a message from the box page: %v", view.name, err)
		}
		threads := threadsOf(t, env, hash, key, "")
		if len(threads) != 1 || !strings.Contains(status, threads[0]["id"].(string)) {
			t.Fatalf("%s: the page answered %q; the box's mailbox holds %v", view.name, status, threads)
		}
		thread := env.Do(t, "GET", "/api/threads/"+threads[0]["id"].(string), key, nil).Expect(t, 200).JSON(t)
		msg := thread["messages"].([]any)[0].(map[string]any)
		if msg["from_hash"] != sender || msg["body"] != "Hello from a browser ("+view.name+")" {
			t.Errorf("%s: the mailbox holds %v", view.name, msg)
		}
		check("send " + view.name)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the pages logged console errors: %v", p)
	}
}
