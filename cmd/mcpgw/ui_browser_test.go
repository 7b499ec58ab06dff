//go:build linux

package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestStatusPageInChromium drives the page in headless Chromium: a failing
// server shows its stderr; once what it lacked is there, its Reconnect
// button brings it back and the page shows it connected without being
// reloaded; the search box returns ranked tools. MCPGW_SCREENSHOT=FILE
// saves a screenshot of the page.
func TestStatusPageInChromium(t *testing.T) {
	t.Parallel()
	chromium := needChromium(t)
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	script := filepath.Join(dir, "flaky.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nif [ ! -e "+ready+" ]; then echo 'fatal: the database is not reachable' >&2; exit 1; fi\nexec "+e2e.TestServerBin+" testserver\n"), 0o700)
	config := e2e.WriteConfig(t, dir, map[string]any{
		"flaky":  map[string]any{"command": script, "lifecycle": "eager"},
		"steady": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}, "lifecycle": "eager"},
	}, nil)
	d := e2e.StartDaemon(t, dir, config)

	ctx := newChromium(t, chromium)
	// The first action starts the browser: no timeout on its context.
	if err := chromedp.Do(ctx, chromedp.Navigate(d.URL+"/")); err != nil {
		t.Fatalf("loading the page: %v", err)
	}
	tctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()

	if err := chromedp.Do(tctx, chromedp.WaitVisible(`tr#server-flaky.state-bad`)); err != nil {
		t.Fatalf("the page never showed flaky failing: %v", err)
	}
	stderr, err := chromedp.Run(tctx, textNow(`#log-flaky`))
	if err != nil || !strings.Contains(stderr, "fatal: the database is not reachable") {
		t.Errorf("flaky's log on the page lacks its stderr (%v):\n%s", err, stderr)
	}
	if path := os.Getenv("MCPGW_SCREENSHOT"); path != "" {
		if png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100)); err == nil {
			os.WriteFile(path, png, 0o644)
		}
	}

	os.WriteFile(ready, nil, 0o600)
	if _, err := chromedp.Run(tctx, chromedp.Evaluate[bool](`window.notReloaded = true`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tctx,
		clickNow(`tr#server-flaky button`),
		chromedp.WaitVisible(`tr#server-flaky.state-ok`),
	); err != nil {
		t.Fatalf("Reconnect did not bring flaky back on the page: %v", err)
	}
	// Disable, then enable again, from the page.
	if err := chromedp.Do(tctx,
		clickNow(`tr#server-flaky form[action="/-/disable"] button`),
		chromedp.WaitVisible(`tr#server-flaky form[action="/-/enable"] button`),
	); err != nil {
		t.Fatalf("Disable: %v", err)
	}
	if state, err := chromedp.Run(tctx, textNow(`tr#server-flaky td:nth-child(2)`)); err != nil || !strings.HasPrefix(state, "disabled") {
		t.Errorf("state after Disable: %q (%v)", state, err)
	}
	if err := chromedp.Do(tctx,
		clickNow(`tr#server-flaky form[action="/-/enable"] button`),
		chromedp.WaitVisible(`tr#server-flaky form[action="/-/disable"] button`),
	); err != nil {
		t.Fatalf("Enable: %v", err)
	}
	if same, err := chromedp.Run(tctx, chromedp.Evaluate[bool](`window.notReloaded === true`)); err != nil || !same {
		t.Errorf("the page was reloaded (%v); it should update in place", err)
	}

	// A page from another origin that posts a form to the daemon, as a
	// hostile site would: the browser sends it, the daemon refuses it.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<form id="f" method="post" action="%s/-/disable"><input name="server" value="steady"></form><script>document.getElementById("f").submit()</script>`, d.URL)
	}))
	defer evil.Close()
	if err := chromedp.Do(tctx,
		chromedp.Navigate(evil.URL),
		chromedp.Sleep(time.Second), // the form posts as the page loads
	); err != nil {
		t.Fatalf("the hostile page: %v", err)
	}
	refused, err := chromedp.Run(tctx, chromedp.Text(`body`))
	if err != nil || !strings.Contains(refused, "cross-origin") {
		t.Errorf("the browser, after the hostile form (%v): %q", err, refused)
	}
	for _, sr := range d.Report(t).Servers {
		if sr.Name == "steady" && (sr.State == "disabled" || sr.DisabledHere) {
			t.Errorf("a cross-origin form disabled steady (the browser showed %q)", refused)
		}
	}
	if err := chromedp.Do(tctx, chromedp.Navigate(d.URL+"/")); err != nil {
		t.Fatal(err)
	}

	if err := chromedp.Do(tctx,
		chromedp.SetValue(`#search input[name=q]`, "echo a message"),
		chromedp.Submit(`#search input[name=q]`),
		chromedp.WaitVisible(`#results li`),
	); err != nil {
		t.Fatalf("search: %v", err)
	}
	results, err := chromedp.Run(tctx, chromedp.Text(`#results`))
	if err != nil || !strings.Contains(results, "echo") || !strings.Contains(results, "why") {
		t.Errorf("search results (%v):\n%s", err, results)
	}
}

// TestApprovalInChromium: a call that waits for approval is on the page;
// the user clicks Allow once in a real browser, and the call goes through.
func TestApprovalInChromium(t *testing.T) {
	t.Parallel()
	chromium := needChromium(t)
	e2e.NeedNode(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{"p": e2e.PolicyServer(map[string]any{"approveTools": true})},
		map[string]any{"approvalTimeoutMs": 120000})
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")
	done := e2e.GoClient(t, e2e.Target{URL: d.MCPURL()}, []e2e.Step{
		e2e.MCPCall(map[string]any{"tool": "p_delete_thing", "args": map[string]any{"name": "from-the-page"}}),
	})
	p := e2e.WaitPending(t, d, "delete_thing")

	ctx := newChromium(t, chromium)
	if err := chromedp.Do(ctx, chromedp.Navigate(d.URL+"/")); err != nil {
		t.Fatalf("loading the page: %v", err)
	}
	tctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()
	card := `#approval-` + p.ID
	text, err := chromedp.Run(tctx, chromedp.Text(card))
	if err != nil || !strings.Contains(text, "delete_thing") || !strings.Contains(text, `name: "from-the-page"`) {
		t.Fatalf("the page's approval (%v):\n%s", err, text)
	}
	if err := chromedp.Do(tctx, clickNow(card+` form:has(input[value="once"]) button`)); err != nil {
		t.Fatalf("clicking Allow once: %v", err)
	}
	select {
	case run := <-done:
		if got := run.Check(t)[0].Text(); !strings.Contains(got, "deleted from-the-page") {
			t.Errorf("the call after Allow once: %q", got)
		}
	case <-tctx.Done():
		t.Fatal("the call never went through after Allow once")
	}
}

// needChromium returns Debian's Chromium, or skips the test (fails it in
// CI) when it is not installed.
func needChromium(t *testing.T) string {
	t.Helper()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed (apt-get install chromium)")
		}
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	return chromium
}

// clickNow clicks what sel matches when the click runs, in the page's own
// thread. The page re-renders its rows in place as the daemon's state
// changes, so a node that chromedp.Click found in one DevTools call may be
// gone by its next ("Could not find node with given id").
func clickNow(sel string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		clicked, err := chromedp.Evaluate[bool](fmt.Sprintf(`(() => { const el = document.querySelector(%q); if (!el) return false; el.click(); return true; })()`, sel))(ctx, t)
		if err == nil && !clicked {
			err = fmt.Errorf("nothing on the page matches %s", sel)
		}
		return chromedp.Void{}, err
	}
}

// textNow is the visible text of the element sel matches, read in the
// page's own thread, as clickNow clicks: the page re-renders rows in place
// as the daemon's state changes, and chromedp.Text's node could be gone
// between its query and its read ("No node with given id found").
func textNow(sel string) chromedp.Action[string] {
	return func(ctx context.Context, t *chromedp.Target) (string, error) {
		text, err := chromedp.Evaluate[*string](fmt.Sprintf(`(() => { const el = document.querySelector(%q); return el ? el.innerText : null; })()`, sel))(ctx, t)
		if err == nil && text == nil {
			err = fmt.Errorf("nothing on the page matches %s", sel)
		}
		if err != nil {
			return "", err
		}
		return *text, nil
	}
}

// newChromium starts a headless Chromium for the test, ended with it.
func newChromium(t *testing.T, chromium string) context.Context {
	t.Helper()
	release := e2e.Heavy()
	t.Cleanup(release)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1200, 900))...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return ctx
}
