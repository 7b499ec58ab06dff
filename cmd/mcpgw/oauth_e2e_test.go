//go:build linux

package main

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// TestOAuthLoginThroughDaemon: a remote server behind OAuth, through the
// real daemon. Before a login its calls fail with the command to run and
// no browser opens; `mcpgw login` (with a $BROWSER script that follows the
// redirect) logs in; calls work, across a daemon restart without another
// login; a refused access token is refreshed silently; a revoked refresh
// token makes the server need a login again, without a browser.
func TestOAuthLoginThroughDaemon(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	as := fakeupstream.NewOAuthServer(time.Hour)
	ts := httptest.NewServer(as.Handler())
	defer ts.Close()
	as.URL = ts.URL
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"remote": map[string]any{"url": ts.URL + "/mcp", "auth": "oauth"},
	}, map[string]any{"mode": "direct"})
	browser := filepath.Join(dir, "browser.sh")
	os.WriteFile(browser, []byte("#!/bin/sh\nexec curl -fsS -L --max-redirs 3 -o /dev/null \"$1\"\n"), 0o700)
	env := append(os.Environ(), "HOME="+dir, "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_RUNTIME_DIR="+filepath.Join(dir, "run"), "BROWSER="+browser)

	call := func(d *e2e.Daemon) (string, bool) {
		t.Helper()
		c := mcp.NewClient(&mcp.Implementation{Name: "oauth-test", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: d.MCPURL()}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			return "connecting: " + err.Error(), true
		}
		defer cs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), e2e.WaitLimit)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "remote_echo", Arguments: map[string]any{"message": "through oauth"}})
		if err != nil {
			return err.Error(), true
		}
		var text []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text = append(text, tc.Text)
			}
		}
		return strings.Join(text, "\n"), res.IsError
	}

	d := e2e.StartDaemon(t, dir, config)
	if got, isErr := call(d); !isErr || !strings.Contains(got, "mcpgw login remote") {
		t.Errorf("before login: %q (error %v), want the login command", got, isErr)
	}
	if n := as.Authorizations.Load(); n != 0 {
		t.Fatalf("%d authorizations before any login: the daemon must never start one", n)
	}
	loginState := func(d *e2e.Daemon) string {
		for _, sr := range d.Report(t).Servers {
			if sr.Name == "remote" {
				return sr.State + " / " + sr.Login
			}
		}
		return "missing"
	}
	if got := loginState(d); got != "needs-auth / none" {
		t.Errorf("status before login: %q, want needs-auth / none", got)
	}

	// No --config: login asks the daemon which file it reads (not the
	// default one here).
	login := exec.Command(e2e.BuildMcpgw(t), "login", "--url", d.URL, "--timeout", "30s", "remote")
	login.Env = env
	out, err := login.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Logged in to remote.") || !strings.Contains(string(out), ts.URL+"/authorize?") {
		t.Fatalf("mcpgw login: %v\n%s", err, out)
	}
	if got, isErr := call(d); isErr || got != "through oauth" {
		t.Errorf("after login: %q (error %v)\nlogin said:\n%s", got, isErr, out)
	}

	if got := loginState(d); got != "connected / logged in" {
		t.Errorf("status after login: %q", got)
	}
	d.Proc.Stop()
	d = e2e.StartDaemon(t, dir, config)
	if got, isErr := call(d); isErr || got != "through oauth" {
		t.Errorf("after a restart: %q (error %v)", got, isErr)
	}

	// Four sessions call at once with the access token expired: one
	// refresh serves them all.
	as.ExpireAccessTokens()
	var wg sync.WaitGroup
	answers := make([]string, 4)
	for i := range answers {
		wg.Go(func() {
			got, isErr := call(d)
			if isErr {
				got = "error: " + got
			}
			answers[i] = got
		})
	}
	wg.Wait()
	for i, got := range answers {
		if got != "through oauth" {
			t.Errorf("session %d after the access token expired: %q", i, got)
		}
	}
	if n := as.Refreshes.Load(); n != 1 {
		t.Errorf("%d refreshes for four sessions calling at once, want 1", n)
	}

	as.ExpireAccessTokens()
	as.RevokeRefreshTokens()
	if got, isErr := call(d); !isErr || !strings.Contains(got, "mcpgw login remote") {
		t.Errorf("after the refresh token was revoked: %q (error %v), want the login command", got, isErr)
	}
	if n := as.Authorizations.Load(); n != 1 {
		t.Errorf("%d authorizations, want only the one login", n)
	}
}
