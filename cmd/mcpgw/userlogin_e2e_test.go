//go:build linux

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/internal/redistest"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// oauthRecorder is in front of an OAuth upstream: it records the tokens
// its token endpoint issues and the access token each MCP request
// carries.
type oauthRecorder struct {
	h http.Handler

	mu     sync.Mutex
	issued []string // access and refresh tokens, in order
	sent   []string // the access token of each /mcp request ("" for none)
}

// captureWriter keeps a copy of what is written.
type captureWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (w *captureWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	return w.ResponseWriter.Write(p)
}

func (w *captureWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (o *oauthRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/mcp":
		o.mu.Lock()
		o.sent = append(o.sent, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		o.mu.Unlock()
	case strings.HasSuffix(r.URL.Path, "/token"):
		cw := &captureWriter{ResponseWriter: w}
		o.h.ServeHTTP(cw, r)
		var tok struct {
			Access  string `json:"access_token"`
			Refresh string `json:"refresh_token"`
		}
		if json.Unmarshal(cw.buf.Bytes(), &tok) == nil {
			o.mu.Lock()
			for _, s := range []string{tok.Access, tok.Refresh} {
				if s != "" {
					o.issued = append(o.issued, s)
				}
			}
			o.mu.Unlock()
		}
		return
	}
	o.h.ServeHTTP(w, r)
}

// mark returns how many tokens were issued and requests made so far.
func (o *oauthRecorder) mark() (issued, sent int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.issued), len(o.sent)
}

// since returns the tokens issued and sent after a mark.
func (o *oauthRecorder) since(issued, sent int) (newIssued, newSent []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.issued[issued:]), slices.Clone(o.sent[sent:])
}

// TestUserOAuthLoginsE2E: in team mode, a server with "auth": "oauth" and
// "isolation": "user" is reached with each user's own login. Two replicas
// share one Redis. alice logs in with `mcpgw login` through replica 1 (the
// browser flow runs in the CLI; the daemon keeps the credentials) and her
// calls work through both replicas; bob's calls fail with the login to
// run and reach the upstream not at all; bob logs in himself and his
// calls carry his own tokens, never alice's. Redis holds each login
// sealed: none of alice's tokens in the clear, and her value copied to
// bob's key does not serve bob. alice's logout forgets hers.
func TestUserOAuthLoginsE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	rs := redistest.Start(t)
	iss := e2e.NewIssuer(t)
	as := fakeupstream.NewOAuthServer(time.Hour)
	rec := &oauthRecorder{h: as.Handler()}
	ts := httptest.NewServer(rec)
	t.Cleanup(ts.Close) // after the daemons, whose streams it would wait for
	as.URL = ts.URL

	key := make([]byte, 32)
	rand.Read(key)
	dir := t.TempDir()
	config := e2e.WriteTeamConfig(t, dir, iss, e2e.Team{
		Block: map[string]any{"store": rs.URL, "credentialKey": base64.StdEncoding.EncodeToString(key)},
		Servers: map[string]any{
			"remote": map[string]any{"url": ts.URL + "/mcp", "auth": "oauth", "isolation": "user"},
		},
	})
	replicas := []*e2e.TeamDaemon{
		{Daemon: e2e.StartDaemon(t, t.TempDir(), config, "--allow-remote"), Issuer: iss},
		{Daemon: e2e.StartDaemon(t, t.TempDir(), config, "--allow-remote"), Issuer: iss},
	}
	alice, bob := iss.Token("alice", e2e.TeamAudience), iss.Token("bob", e2e.TeamAudience)
	echo := func(d *e2e.TeamDaemon, token, msg string) e2e.StepResult {
		t.Helper()
		return e2e.RunClient(t, d.WithToken(token), []e2e.Step{e2e.MCPCall(map[string]any{"tool": "remote_echo", "args": map[string]any{"message": msg}})})[0]
	}
	browser := filepath.Join(dir, "browser.sh")
	os.WriteFile(browser, []byte("#!/bin/sh\nexec curl -fsS -L --max-redirs 3 -o /dev/null \"$1\"\n"), 0o700)
	cli := func(token string, args ...string) (string, error) {
		home := t.TempDir()
		cmd := exec.Command(e2e.BuildMcpgw(t), args...)
		cmd.Env = append(os.Environ(), "MCPGW_TOKEN="+token, "BROWSER="+browser, "HOME="+home,
			"XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_RUNTIME_DIR="+filepath.Join(home, "run"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	rc := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rc.Close()
	ctx := context.Background()
	loginKeys := func(user string) []string {
		t.Helper()
		keys, err := rc.Keys(ctx, "mcpgw:login:"+user+":*").Result()
		if err != nil {
			t.Fatal(err)
		}
		return keys
	}

	// alice logs in through replica 1, as a user would.
	i0, s0 := rec.mark()
	out, err := cli(alice, "login", "--url", replicas[0].URL, "--timeout", "60s", "remote")
	if err != nil || !strings.Contains(out, "Logged in to remote.") || !strings.Contains(out, ts.URL+"/authorize?") ||
		!strings.Contains(out, "The daemon has connected remote for you.") {
		t.Fatalf("alice's mcpgw login: %v\n%s", err, out)
	}
	for i, d := range replicas {
		if r := echo(d, alice, "alice here"); r.IsError() || !strings.Contains(r.Text(), "alice here") {
			t.Errorf("alice's call through replica %d: %s", i+1, r)
		}
	}
	aliceTokens, aliceSent := rec.since(i0, s0)
	if len(aliceTokens) != 2 {
		t.Fatalf("tokens issued at alice's login: %q, want an access and a refresh token", aliceTokens)
	}
	if !slices.Contains(aliceSent, aliceTokens[0]) {
		t.Errorf("alice's calls never reached the upstream with her token")
	}
	for _, tok := range aliceSent {
		if tok != "" && tok != aliceTokens[0] { // "": the login's first, unauthenticated request
			t.Errorf("alice's calls reached the upstream with %q, not her access token", tok)
		}
	}

	// What Redis holds: alice's login, sealed.
	keys := loginKeys("alice")
	if len(keys) != 1 {
		t.Fatalf("alice's logins in Redis: %q, want one", keys)
	}
	sealed, err := rc.Get(ctx, keys[0]).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range append(slices.Clone(aliceTokens), "access_token", "refresh_token") {
		if bytes.Contains(sealed, []byte(secret)) {
			t.Errorf("Redis holds %q in the clear", secret)
		}
	}

	// bob has not logged in: told to, and the upstream is not asked.
	_, s1 := rec.mark()
	r := echo(replicas[0], bob, "bob here")
	if !r.IsError() || !strings.Contains(r.Text(), "mcpgw login remote") {
		t.Errorf("bob's call before his login: %s; want the login to run", r)
	}
	if _, sent := rec.since(0, s1); len(sent) != 0 {
		t.Errorf("bob's call without a login reached the upstream %d times (tokens %q)", len(sent), sent)
	}

	// bob logs in himself: his calls carry his own token.
	i2, s2 := rec.mark()
	if out, err := cli(bob, "login", "--url", replicas[0].URL, "--timeout", "60s", "remote"); err != nil || !strings.Contains(out, "Logged in to remote.") {
		t.Fatalf("bob's mcpgw login: %v\n%s", err, out)
	}
	if r := echo(replicas[0], bob, "bob here"); r.IsError() || !strings.Contains(r.Text(), "bob here") {
		t.Errorf("bob's call after his login: %s", r)
	}
	bobTokens, bobSent := rec.since(i2, s2)
	if len(bobTokens) != 2 || slices.Contains(aliceTokens, bobTokens[0]) {
		t.Fatalf("tokens issued at bob's login: %q (alice's %q)", bobTokens, aliceTokens)
	}
	if !slices.Contains(bobSent, bobTokens[0]) {
		t.Errorf("bob's call never reached the upstream with his token")
	}
	for _, tok := range bobSent {
		if tok != "" && tok != bobTokens[0] {
			t.Errorf("bob's calls reached the upstream with %q, not his own access token", tok)
		}
	}

	// alice's value copied to bob's key: replica 2, which has not read
	// bob's login yet, refuses it, and the upstream is not asked.
	bobKeys := loginKeys("bob")
	if len(bobKeys) != 1 {
		t.Fatalf("bob's logins in Redis: %q", bobKeys)
	}
	if err := rc.Set(ctx, bobKeys[0], sealed, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	_, s3 := rec.mark()
	r = echo(replicas[1], bob, "as alice?")
	if !r.IsError() || !strings.Contains(r.Text(), "does not open") {
		t.Errorf("bob's call with alice's login under his key: %s; want it refused", r)
	}
	if _, sent := rec.since(0, s3); len(sent) != 0 {
		t.Errorf("bob's call with alice's login under his key reached the upstream with %q", sent)
	}

	// alice logs out through replica 1: her login is gone from Redis,
	// and her next call there is told to log in.
	if out, err := cli(alice, "logout", "--url", replicas[0].URL, "remote"); err != nil || !strings.Contains(out, "Logged out of remote") {
		t.Fatalf("alice's mcpgw logout: %v\n%s", err, out)
	}
	if keys := loginKeys("alice"); len(keys) != 0 {
		t.Errorf("alice's login is still in Redis after her logout: %q", keys)
	}
	if r := echo(replicas[0], alice, "gone"); !r.IsError() || !strings.Contains(r.Text(), "mcpgw login remote") {
		t.Errorf("alice's call after her logout: %s; want the login to run", r)
	}
}

// TestUserOAuthLoginsInMemoryE2E: without team.store, users' own logins
// are kept in the daemon's memory: alice's login serves her calls and not
// bob's, and is gone after a restart. A server not marked per user is not
// one a user logs in to (the CLI says why); credentials for another URL
// are refused.
func TestUserOAuthLoginsInMemoryE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	iss := e2e.NewIssuer(t)
	as := fakeupstream.NewOAuthServer(time.Hour)
	ts := httptest.NewServer(as.Handler())
	t.Cleanup(ts.Close)
	as.URL = ts.URL
	d := e2e.StartTeamDaemon(t, iss, e2e.Team{Servers: map[string]any{
		"remote": map[string]any{"url": ts.URL + "/mcp", "auth": "oauth", "isolation": "user"},
		"shared": map[string]any{"url": ts.URL + "/mcp", "auth": "oauth"},
	}})
	dir := t.TempDir()
	alice, bob := d.Token("alice"), d.Token("bob")
	echo := func(token string) e2e.StepResult {
		t.Helper()
		return e2e.RunClient(t, d.WithToken(token), []e2e.Step{e2e.MCPCall(map[string]any{"tool": "remote_echo", "args": map[string]any{"message": "hi"}})})[0]
	}
	browser := filepath.Join(dir, "browser.sh")
	os.WriteFile(browser, []byte("#!/bin/sh\nexec curl -fsS -L --max-redirs 3 -o /dev/null \"$1\"\n"), 0o700)
	login := func(token, server string) (string, error) {
		home := t.TempDir()
		cmd := exec.Command(e2e.BuildMcpgw(t), "login", "--url", d.URL, "--timeout", "60s", server)
		cmd.Env = append(os.Environ(), "MCPGW_TOKEN="+token, "BROWSER="+browser, "HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, "state"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := login(alice, "remote"); err != nil || !strings.Contains(out, "Logged in to remote.") {
		t.Fatalf("alice's mcpgw login: %v\n%s", err, out)
	}
	if r := echo(alice); r.IsError() || !strings.Contains(r.Text(), "hi") {
		t.Errorf("alice's call: %s", r)
	}
	if r := echo(bob); !r.IsError() || !strings.Contains(r.Text(), "mcpgw login remote") {
		t.Errorf("bob's call: %s; want the login to run", r)
	}
	// The status report shows each user their own login.
	for user, want := range map[string]string{"alice": "logged in", "bob": "none"} {
		for _, s := range e2e.DaemonStatusAs(t, d.URL, d.Token(user)).Servers {
			if s.Name == "remote" && s.Login != want {
				t.Errorf("status as %s: remote's login %q, want %q", user, s.Login, want)
			}
		}
	}
	if out, err := login(bob, "shared"); err == nil || !strings.Contains(out, `server "shared" is not logged in to by each user`) {
		t.Errorf("bob's login to a shared server: %v\n%s", err, out)
	}
	req, _ := http.NewRequest(http.MethodPut, d.URL+"/-/logins/remote", strings.NewReader(`{"serverUrl":"https://elsewhere.example/mcp","tokenUrl":"https://as/token","token":{"access_token":"x"}}`))
	req.Header.Set("Authorization", "Bearer "+bob)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a login for another URL: %s, want 400", resp.Status)
	}
	// A login a thousand times the size of one is refused whole, and
	// leaves alice's as it was.
	huge := `{"serverUrl":"` + ts.URL + "/mcp" + `","tokenUrl":"https://as/token","token":{"access_token":"` + strings.Repeat("x", 1<<20) + `"}}`
	req, _ = http.NewRequest(http.MethodPut, d.URL+"/-/logins/remote", strings.NewReader(huge))
	req.Header.Set("Authorization", "Bearer "+alice)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 1 MiB login: %s, want 413", resp.Status)
	}
	if r := echo(alice); r.IsError() || !strings.Contains(r.Text(), "hi") {
		t.Errorf("alice's call after a 1 MiB login was refused: %s", r)
	}

	// Kept in memory only: a restart forgets it.
	d.Proc.Stop()
	d.Daemon = e2e.StartDaemon(t, d.Dir, filepath.Join(d.Dir, "mcp.json"), "--allow-remote")
	if r := echo(alice); !r.IsError() || !strings.Contains(r.Text(), "mcpgw login remote") {
		t.Errorf("alice's call after a restart: %s; want the login to run", r)
	}
}
