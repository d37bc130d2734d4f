//go:build browser && linux

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The box page in a real headless Chromium (make test-browser). In CI a missing Chromium fails
// the test; elsewhere the test says it is skipped.

// chromiumPath finds Chromium, or fails (CI) or skips the test.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed; CI installs it with apt (.ci/run)")
	}
	t.Skip("SKIPPED: chromium is not installed (apt-get install -y chromium); the box page was not tested in a browser")
	return ""
}

// browser starts a fresh headless Chromium and returns a tab context that records console
// errors and uncaught exceptions. Chromium runs in its own process group; when the test ends the
// whole group is killed and the test waits until none of it runs, since Chromium's helper
// processes outlive the main one for a moment and keep writing into the profile directory, which
// the test's TempDir cleanup removes next.
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		}),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(tab, 90*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		group := 0
		if c := chromedp.FromContext(tab); c != nil && c.Browser != nil && c.Browser.Process() != nil {
			group = c.Browser.Process().Pid
		}
		cancelTab()
		if group != 0 {
			stopGroup(t, group)
		}
		cancelAlloc()
	})
	var mu sync.Mutex
	var problems []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeWarning {
				problems = append(problems, fmt.Sprintf("console.%s", ev.Type))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.LevelError {
				problems = append(problems, "log: "+ev.Entry.Text)
			}
		}
	})
	if err := chromedp.Run(ctx, log.Enable(), runtime.Enable()); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), problems...)
	}
}

// stopGroup kills what is left of the process group and waits until none of its processes runs
// (zombies, which write nothing, may wait for their reaper).
func stopGroup(t *testing.T, group int) {
	t.Helper()
	_ = syscall.Kill(-group, syscall.SIGKILL)
	deadline := time.Now().Add(10 * time.Second)
	for live := groupMembers(group); live > 0; live = groupMembers(group) {
		if time.Now().After(deadline) {
			t.Errorf("%d Chromium processes of group %d still run after it was killed", live, group)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// groupMembers counts the processes of a process group that are not zombies, from /proc.
func groupMembers(group int) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // the process ended meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) >= 3 && f[0] != "Z" && f[2] == strconv.Itoa(group) {
			n++
		}
	}
	return n
}

// screenshotDir is where the screenshots go (SCREENSHOT_DIR, else a folder in the temp dir).
func screenshotDir(t *testing.T) string {
	dir := os.Getenv("SCREENSHOT_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "svc-box-page")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("screenshot dir: %v", err)
	}
	return dir
}

func TestBoxPageInChromium(t *testing.T) {
	env := Start(t)
	box, key := env.CreateObject(t, map[string]any{"initial_llm_txt": hostileProfile +
		"\n## What I work on\n\n- difference engines\n- notes on the analytical engine, with a rather long line that must wrap on a phone screen without scrolling sideways\n\n```\nPOST /api/messages\n```\n"})
	enableFeed(t, env, box, key)
	for i := range 3 {
		publish(t, env, box, key, fmt.Sprintf("Update number %d", i), "working", "done")
	}
	url := env.URL + "/" + box
	ctx, problems := browser(t)
	dir := screenshotDir(t)

	for _, view := range []struct {
		name          string
		width, height int64
		mobile        bool
	}{{"phone", 390, 844, true}, {"desktop", 1280, 900, false}} {
		emulate := chromedp.EmulateViewport(view.width, view.height)
		if view.mobile {
			emulate = chromedp.EmulateViewport(view.width, view.height, chromedp.EmulateScale(2), chromedp.EmulateMobile)
		}
		var profile, feed string
		var pwned, scripts, overflow bool
		var shot []byte
		err := chromedp.Run(ctx, emulate,
			chromedp.Navigate(url),
			chromedp.WaitVisible("#feed", chromedp.ByQuery),
			chromedp.Text("#profile", &profile, chromedp.ByQuery),
			chromedp.Text("#feed", &feed, chromedp.ByQuery),
			chromedp.Evaluate(`window.__pwned !== undefined`, &pwned),
			// The page's own script is its only one: nothing of the profile became a script.
			chromedp.Evaluate(`document.scripts.length !== 1 || document.querySelector('main script') !== null`, &scripts),
			// Nothing sticks out of the viewport (code blocks scroll inside themselves).
			chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth ||
				[...document.querySelectorAll('body *')].some(e => !e.closest('pre') &&
					(e.getBoundingClientRect().right > window.innerWidth + 1 || e.scrollWidth > e.clientWidth + 1))`, &overflow),
			chromedp.FullScreenshot(&shot, 100),
		)
		if err != nil {
			t.Fatalf("%s: load %s: %v", view.name, url, err)
		}
		if !strings.Contains(profile, "Analyst of engines") || !strings.Contains(profile, "difference engines") {
			t.Errorf("%s: the profile section shows %q", view.name, profile)
		}
		if !strings.Contains(feed, "Update number 2") || !strings.Contains(feed, "Update number 0") {
			t.Errorf("%s: the feed section shows %q", view.name, feed)
		}
		if pwned || scripts {
			t.Errorf("%s: code from the profile ran (pwned %v) or a script element beyond the page's own exists (%v)", view.name, pwned, scripts)
		}
		if overflow {
			t.Errorf("%s: something sticks out of the page at %dpx", view.name, view.width)
		}
		// The profile's javascript: link was removed, so clicking its text does nothing either.
		var clicked bool
		if err := chromedp.Run(ctx,
			chromedp.Evaluate(`(() => { for (const a of document.querySelectorAll('#profile a')) a.click(); return window.__pwned !== undefined })()`, &clicked),
		); err != nil {
			t.Fatalf("%s: click the profile's links: %v", view.name, err)
		}
		if clicked {
			t.Errorf("%s: clicking a profile link ran code", view.name)
		}
		path := filepath.Join(dir, "box-page-"+view.name+".png")
		if err := os.WriteFile(path, shot, 0o644); err != nil {
			t.Fatalf("save %s: %v", path, err)
		}
		t.Logf("%s screenshot: %s", view.name, path)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the box page logged console errors: %v", p)
	}

	// An unknown box is the not-found page, answered with 404.
	resp, err := http.Get(env.URL + "/svc_nosuchbox")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown box: %d, want 404", resp.StatusCode)
	}
	var heading string
	if err := chromedp.Run(ctx, chromedp.Navigate(env.URL+"/svc_nosuchbox"), chromedp.Text("h1", &heading, chromedp.ByQuery)); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("load the not-found page: %v", err)
	}
	if heading != "No such box" {
		t.Errorf("not-found page heading = %q", heading)
	}
}
