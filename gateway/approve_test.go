package gateway

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/gateway/audit"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// newPolicyGateway is a gateway with one server, "p", running the test
// server with its policy tools, under settings.
func newPolicyGateway(t *testing.T, settings registry.Settings, sessionDir string) *Hub {
	t.Helper()
	return newPolicyGatewayKeyed(t, settings, sessionDir, nil)
}

// newPolicyGatewayKeyed is newPolicyGateway with the key of its session
// states.
func newPolicyGatewayKeyed(t *testing.T, settings registry.Settings, sessionDir string, key []byte) *Hub {
	t.Helper()
	if settings.ToolPrefix == "" {
		settings.ToolPrefix = registry.PrefixServer
	}
	cfg := &registry.Config{Servers: map[string]*registry.Server{
		"p": fakeupstream.Server("p", map[string]string{fakeupstream.EnvPolicy: "1"}),
	}, Settings: settings}
	gw := New(cfg, &Options{NoBootstrap: true, SessionDir: sessionDir, StateKey: key})
	t.Cleanup(func() { gw.Close() })
	gw.Start()
	connectNow(t, gw, "p")
	return gw
}

var destructive = registry.Approval{Set: true, Destructive: true, Field: "settings.approveTools"}

// waitApproval waits for a call to wait for approval and returns it.
func waitApproval(t *testing.T, gw *Hub) api.PendingApproval {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if list := gw.Approvals(); len(list) > 0 {
			return list[0]
		}
		if time.Now().After(deadline) {
			t.Fatal("no call waits for approval")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

type callResult struct {
	text  string
	isErr bool
}

func callAsync(t *testing.T, c *client, name string, args any) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		text, isErr := c.call(t, name, args)
		ch <- callResult{text, isErr}
	}()
	return ch
}

// TestApprovalFromThePage: a session that cannot answer a form waits; the
// page lists the call with its buttons, and its POST releases it; a grant
// for the tool covers the session's next call and no other session's.
func TestApprovalFromThePage(t *testing.T) {
	t.Parallel()
	gw := newPolicyGateway(t, registry.Settings{ApproveTools: destructive, ApprovalTimeout: time.Minute}, "")
	h := gw.Handler(&HTTPOptions{Token: pageToken})
	a := connect(t, gw, SessionOptions{})
	res := callAsync(t, a, "mcp", map[string]any{"tool": "p_delete_thing", "args": map[string]any{"name": "one"}})
	p := waitApproval(t, gw)

	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/", nil)
	req.Header.Set("Authorization", "Bearer "+pageToken)
	h.ServeHTTP(rec, req)
	page := rec.Body.String()
	for _, want := range []string{`id="approval-` + p.ID + `"`, "<strong>delete_thing</strong> on <strong>p</strong>", `name: &#34;one&#34;`, "Allow this tool for the session", `value="deny"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if code := postForm(h, "/-/approve", "id="+p.ID+"&decision=tool"); code != http.StatusSeeOther {
		t.Fatalf("POST /-/approve: %d", code)
	}
	if r := <-res; r.isErr || !strings.Contains(r.text, "deleted one (call 1)") {
		t.Fatalf("approved call: %+v", r)
	}
	// The session's tool grant: no wait.
	if text, isErr := a.call(t, "mcp", map[string]any{"tool": "p_delete_thing", "args": map[string]any{"name": "two"}}); isErr || !strings.Contains(text, "deleted two (call 2)") {
		t.Fatalf("call under the grant: %q", text)
	}
	// Another session is asked again; deny it.
	b := connect(t, gw, SessionOptions{})
	res = callAsync(t, b, "mcp", map[string]any{"tool": "p_delete_thing", "args": map[string]any{"name": "three"}})
	p = waitApproval(t, gw)
	if _, err := gw.Decide(p.ID, "deny", "cli"); err != nil {
		t.Fatal(err)
	}
	if r := <-res; !r.isErr || !strings.Contains(r.text, "denied") {
		t.Fatalf("denied call: %+v", r)
	}
	if _, err := gw.Decide(p.ID, "once", "cli"); err != ErrNoApproval {
		t.Errorf("deciding twice: %v, want ErrNoApproval", err)
	}
	if text, _ := a.call(t, "mcp", map[string]any{"tool": "p_delete_count"}); text != "2" {
		t.Errorf("delete_thing calls that reached the upstream: %s, want 2", text)
	}
}

// TestGrantSurvivesResume: a shim session's grant is kept with its state,
// so the session resumed after a daemon restart, with its secret, is not
// asked again; a resume of its ID without that secret is.
func TestGrantSurvivesResume(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := []byte("0123456789abcdef0123456789abcdef")
	gw := newPolicyGatewayKeyed(t, registry.Settings{ApproveTools: destructive, ApprovalTimeout: time.Minute}, dir, key)
	a := connect(t, gw, SessionOptions{ID: "sess1"})
	if a.id != "sess1" || len(a.secret) != 32 {
		t.Fatalf("the shim is told %q, %q; want its own ID and a 128-bit secret", a.id, a.secret)
	}
	res := callAsync(t, a, "mcp", map[string]any{"tool": "p_delete_thing", "args": map[string]any{"name": "x"}})
	if _, err := gw.Decide(waitApproval(t, gw).ID, "server", "page"); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r.isErr {
		t.Fatalf("approved call: %+v", r)
	}

	gw2 := newPolicyGatewayKeyed(t, registry.Settings{ApproveTools: destructive, ApprovalTimeout: 50 * time.Millisecond}, dir, key)
	forged := connect(t, gw2, SessionOptions{ID: "sess1", Resume: true, Secret: "0123456789abcdef0123456789abcdef"})
	if forged.id == "sess1" {
		t.Errorf("a resume with another secret keeps the session's ID")
	}
	if text, isErr := forged.call(t, "mcp", map[string]any{"tool": "p_delete_thing", "args": map[string]any{"name": "f"}}); !isErr || !strings.Contains(text, "approval_required") {
		t.Errorf("a forged resume's call: %q", text)
	}
	resumed := connect(t, gw2, SessionOptions{ID: "sess1", Resume: true, Secret: a.secret})
	if resumed.id != "sess1" || resumed.secret != a.secret {
		t.Errorf("the resumed shim is told %q, %q; want sess1 and its secret", resumed.id, resumed.secret)
	}
	if text, isErr := resumed.call(t, "mcp", map[string]any{"tool": "p_delete_thing", "args": map[string]any{"name": "y"}}); isErr || !strings.Contains(text, "deleted y") {
		t.Errorf("resumed session's call under its server grant: %q", text)
	}
	fresh := connect(t, gw2, SessionOptions{ID: "sess2", Resume: true})
	if text, isErr := fresh.call(t, "mcp", map[string]any{"tool": "p_delete_thing", "args": map[string]any{"name": "z"}}); !isErr || !strings.Contains(text, "approval_required") {
		t.Errorf("another session's call: %q", text)
	}
}

// TestUnguardedCallsAreNotAsked: with no approveTools nothing waits, and
// autoApprove exempts a tool from settings' approveTools.
func TestUnguardedCallsAreNotAsked(t *testing.T) {
	t.Parallel()
	gw := newPolicyGateway(t, registry.Settings{ApproveTools: registry.Approval{Set: true, All: true, Field: "settings.approveTools"}, ApprovalTimeout: 50 * time.Millisecond}, "")
	cfg := *gw.Catalog().View().Config
	srv := *cfg.Servers["p"]
	srv.AutoApprove = []string{"delete_thing"}
	cfg.Servers = map[string]*registry.Server{"p": &srv}
	gw.Reload(&cfg)
	c := connect(t, gw, SessionOptions{})
	if text, isErr := c.call(t, "mcp", map[string]any{"tool": "p_delete_thing", "args": map[string]any{"name": "x"}}); isErr || !strings.Contains(text, "deleted x") {
		t.Errorf("autoApprove'd tool: %q", text)
	}
	if text, isErr := c.call(t, "mcp", map[string]any{"tool": "p_read_thing", "args": map[string]any{"name": "x"}}); !isErr || !strings.Contains(text, "approval_required") {
		t.Errorf("a tool approveTools true covers: %q", text)
	}
}

// TestAuditSetting: every call is on the audit log, with its session and
// a digest of its arguments; settings.audit false turns that off.
func TestAuditSetting(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		dir := t.TempDir()
		log, err := audit.Open(filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "audit.key"), nil)
		if err != nil {
			t.Fatal(err)
		}
		settings := registry.Settings{ToolPrefix: registry.PrefixServer}
		if !on {
			settings.Audit = &on
		}
		cfg := &registry.Config{Servers: map[string]*registry.Server{
			"p": fakeupstream.Server("p", map[string]string{fakeupstream.EnvPolicy: "1"}),
		}, Settings: settings}
		gw := New(cfg, &Options{NoBootstrap: true, Audit: log})
		gw.Start()
		connectNow(t, gw, "p")
		c := connect(t, gw, SessionOptions{ID: "audited"})
		if text, _ := c.call(t, "mcp", map[string]any{"tool": "p_read_thing", "args": map[string]any{"name": "secret-name"}}); text != "read secret-name" {
			t.Fatalf("call: %q", text)
		}
		gw.Close()
		if err := log.Close(); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
		switch {
		case !on && len(data) != 0:
			t.Errorf("settings.audit false, and the log holds %s", data)
		case on && (!strings.Contains(string(data), `"session":"audited"`) || !strings.Contains(string(data), `"tool":"read_thing","args":"hmac-sha256:`) || strings.Contains(string(data), "secret-name")):
			t.Errorf("the audit line: %s", data)
		}
	}
}
