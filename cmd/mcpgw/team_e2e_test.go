//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/gateway/audit"
	"github.com/mcpgw/mcpgw/gateway/identity/testissuer"
	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestTeamModeE2E: the mcpgw binary in team mode, behind a test issuer
// (discovery and keys served from the test process, RS256 tokens), and
// the TypeScript SDK client as alice and as bob. Both list and call; a
// request without a good token gets 401 and where to log in; the audit
// log names who called; alice's call waiting for approval is hers:
// `mcpgw approve` with bob's token neither lists nor decides it, with
// alice's it does, and her call completes.
func TestTeamModeE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	iss := e2e.NewIssuer(t)
	d := e2e.StartTeamDaemon(t, iss, e2e.Team{
		Servers: map[string]any{
			"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}, "approveTools": []string{"add"}},
		},
		Settings: map[string]any{"approvalTimeoutMs": 120000},
	})
	alice, bob := d.Token("alice"), d.Token("bob")
	as := d.WithToken

	// Both list and call.
	for _, who := range []struct{ name, token string }{{"alice", alice}, {"bob", bob}} {
		r := e2e.RunClient(t, as(who.token), []e2e.Step{
			{Op: "listTools"},
			e2e.MCPCall(map[string]any{"tool": "go_echo", "args": map[string]any{"message": "from " + who.name}}),
		})
		if names := e2e.ToolNames(t, r[0]); len(names) != 1 || names[0] != "mcp" {
			t.Errorf("%s lists %v, want [mcp]", who.name, names)
		}
		if r[1].IsError() || !strings.Contains(r[1].Text(), "from "+who.name) {
			t.Errorf("%s's call: %s", who.name, r[1])
		}
	}

	// Refused: no session, 401, and where to log in.
	claims := func(mod func(map[string]any)) map[string]any {
		c := iss.Claims("alice", "mcpgw")
		mod(c)
		return c
	}
	unpublished := iss.NewKey(jose.RS256)
	unpublished.ID = iss.SigningKey().ID
	metadata := d.URL + "/.well-known/oauth-protected-resource"
	for _, tc := range []struct{ name, token string }{
		{"no token", ""},
		{"wrong audience", iss.Token("alice", "other")},
		{"wrong issuer", testissuer.Sign(iss.SigningKey(), claims(func(c map[string]any) { c["iss"] = "https://login.example.com" }))},
		{"bad signature", testissuer.Sign(unpublished, claims(func(map[string]any) {}))},
		{"expired", testissuer.Sign(iss.SigningKey(), claims(func(c map[string]any) { c["exp"] = time.Now().Add(-time.Hour).Unix() }))},
		{"alg none", testissuer.Unsigned(claims(func(map[string]any) {}))},
	} {
		for _, target := range []string{"/mcp", "/-/status", "/-/approvals", "/"} {
			method, body := http.MethodGet, ""
			if target == "/mcp" {
				method, body = http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
			}
			req, _ := http.NewRequest(method, d.URL+target, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			auth := resp.Header.Get("WWW-Authenticate")
			if resp.StatusCode != 401 || !strings.HasPrefix(auth, `Bearer resource_metadata="`+metadata+`"`) || resp.Header.Get("Mcp-Session-Id") != "" {
				t.Errorf("%s, %s %s: %d, WWW-Authenticate %q, session %q; want 401 pointing at %s", tc.name, method, target, resp.StatusCode, auth, resp.Header.Get("Mcp-Session-Id"), metadata)
			}
		}
	}
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if resp, err := http.Get(metadata); err != nil {
		t.Fatal(err)
	} else {
		err = json.NewDecoder(resp.Body).Decode(&meta)
		resp.Body.Close()
		if err != nil || meta.Resource != d.MCPURL() || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != iss.URL {
			t.Errorf("protected resource metadata %+v (%v)", meta, err)
		}
	}
	for _, open := range []string{"/healthz", "/metrics"} {
		if resp, err := http.Get(d.URL + open); err != nil || resp.StatusCode != 200 {
			t.Errorf("%s without a token: %v %v", open, resp, err)
		} else {
			resp.Body.Close()
		}
	}

	// Alice's call of a tool that needs approval waits for her.
	waiting := e2e.GoClient(t, as(alice), []e2e.Step{e2e.MCPCall(map[string]any{"tool": "go_add", "args": map[string]any{"a": 2, "b": 3}, "timeoutMs": 120000})})
	var pending api.PendingApproval
	e2e.PollUntil(t, "alice's pending approval", func() bool {
		req, _ := http.NewRequest(http.MethodGet, d.URL+"/-/approvals", nil)
		req.Header.Set("Authorization", "Bearer "+alice)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var list []api.PendingApproval
		if json.NewDecoder(resp.Body).Decode(&list) != nil || len(list) == 0 {
			return false
		}
		pending = list[0]
		return true
	})
	if pending.User != "alice" || pending.Tool != "add" {
		t.Errorf("pending approval %+v, want alice's call of add", pending)
	}
	if out, err := d.CLIAs(t, alice, "approve", "--list"); err != nil || !strings.Contains(out, pending.ID) {
		t.Errorf("mcpgw approve --list as alice: %v\n%s", err, out)
	}
	if out, err := d.CLIAs(t, bob, "approve", "--list"); err != nil || !strings.Contains(out, "No call waits for approval.") {
		t.Errorf("mcpgw approve --list as bob: %v\n%s", err, out)
	}
	if out, err := d.CLIAs(t, bob, "approve", pending.ID); err == nil || !strings.Contains(out, "no such pending approval") {
		t.Errorf("mcpgw approve %s as bob: %v\n%s", pending.ID, err, out)
	}
	if out, err := d.CLIAs(t, "", "approve", pending.ID); err == nil {
		t.Errorf("mcpgw approve %s without a token: %v\n%s", pending.ID, err, out)
	}
	if out, err := d.CLIAs(t, alice, "approve", pending.ID); err != nil || !strings.Contains(out, "allowed add on go ("+pending.ID+")") {
		t.Fatalf("mcpgw approve %s as alice: %v\n%s", pending.ID, err, out)
	}
	r := (<-waiting).Check(t)
	if r[0].IsError() || !strings.HasPrefix(r[0].Text(), "5") {
		t.Errorf("alice's approved call: %s", r[0])
	}

	// The audit log names who called.
	logPath := filepath.Join(d.Dir, "state", "mcpgw", "audit.jsonl")
	var lines []string
	want := []string{"call alice go echo ok", "call bob go echo ok", "approval alice go add cli", "call alice go add ok"}
	e2e.PollUntil(t, "the audit log's records", func() bool {
		data, _ := os.ReadFile(logPath)
		lines = lines[:0]
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			var rec audit.Record
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("audit line %q: %v", sc.Text(), err)
			}
			word := rec.Outcome
			if rec.Event == audit.EventApproval {
				word = rec.DecidedBy
			}
			lines = append(lines, strings.Join([]string{rec.Event, rec.User, rec.Server, rec.Tool, word}, " "))
		}
		return len(lines) >= len(want)
	})
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit records:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
