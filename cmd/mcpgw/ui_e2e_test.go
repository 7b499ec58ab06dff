//go:build linux

package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// TestStatusPage: the page at / shows every server with its state, a
// failed one with its whole reason and stderr; a same-origin form post
// reconnects a server and comes back to the page, a cross-origin one is
// refused; /-/logs gives a server's lines as text.
func TestStatusPage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"good":   map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}, "lifecycle": "eager"},
		"broken": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}, "env": map[string]any{fakeupstream.EnvFailStart: "fatal: API_KEY is not set"}, "lifecycle": "eager"},
	}, nil)
	d := e2e.StartDaemon(t, dir, config)
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(d.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %s\n%s", path, resp.Status, body)
		}
		return string(body)
	}
	var page string
	for deadline := time.Now().Add(e2e.WaitLimit); ; time.Sleep(100 * time.Millisecond) {
		page = get("/")
		if strings.Contains(page, `<tr class="state-ok" id="server-good">`) && strings.Contains(page, `<tr class="state-bad" id="server-broken">`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page never showed both servers settled:\n%s", page)
		}
	}
	for _, want := range []string{"fatal: API_KEY is not set", `<details id="log-broken" open>`, `name="server" value="good"`, `<form method="post" action="/-/reload"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if logs := get("/-/logs?server=broken"); !strings.Contains(logs, "stderr: fatal: API_KEY is not set") || !strings.Contains(logs, "upstream connect failed") {
		t.Errorf("logs of broken:\n%s", logs)
	}

	post := func(origin string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, d.URL+"/-/connect", strings.NewReader(url.Values{"server": {"good"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		req.Header.Set("Sec-Fetch-Site", map[bool]string{true: "same-origin", false: "cross-site"}[origin == d.URL])
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := post(d.URL); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/#server-good" {
		t.Errorf("same-origin reconnect: %s to %q", resp.Status, resp.Header.Get("Location"))
	}
	if resp := post("http://evil.example"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin reconnect: %s, want 403", resp.Status)
	}
	if logs := get("/-/logs?server=good"); strings.Count(logs, "upstream connected") < 2 {
		t.Errorf("the reconnect is not in good's log:\n%s", logs)
	}
	// The same through the CLI.
	out, err := exec.Command(e2e.BuildMcpgw(t), "logs", "--url", d.URL, "broken").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "stderr: fatal: API_KEY is not set") {
		t.Errorf("mcpgw logs broken: %v\n%s", err, out)
	}
}

func TestNewLines(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ prev, cur, want []string }{
		{nil, []string{"a", "b"}, []string{"a", "b"}},
		{[]string{"a", "b"}, []string{"a", "b", "c"}, []string{"c"}},
		{[]string{"a", "b", "c"}, []string{"b", "c", "d", "e"}, []string{"d", "e"}}, // a fell off the ring
		{[]string{"a"}, []string{"a"}, []string{}},
		{[]string{"x"}, []string{"y"}, []string{"y"}},
	} {
		if got := newLines(tt.prev, tt.cur); strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("NewLines(%q, %q) = %q, want %q", tt.prev, tt.cur, got, tt.want)
		}
	}
}

// TestStatusPageInBrowser loads the page in headless Chromium: it renders,
// and its script (which refreshes it in place) runs without breaking it.
func TestStatusPageInBrowser(t *testing.T) {
	t.Parallel()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed (apt-get install chromium)")
		}
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"good": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}, "lifecycle": "eager"},
	}, nil)
	d := e2e.StartDaemon(t, dir, config)
	// The page is loaded once good is up: what is asserted is how the
	// page renders it, not how soon a loaded machine starts a process.
	e2e.PollUntil(t, "good connected", func() bool {
		for _, s := range e2e.DaemonStatus(t, d.URL).Servers {
			if s.Name == "good" && s.State == "connected" {
				return true
			}
		}
		return false
	})
	ctx, cancel := context.WithTimeout(context.Background(), e2e.WaitLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=7000", "--dump-dom", d.URL+"/")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	dom := string(out)
	for _, want := range []string{`id="server-good"`, `id="summary"`, "1/1 servers connected", `<details id="log-good"`} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %s:\n%s", want, dom)
		}
	}
}
