//go:build unix

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/gateway/identity/testissuer"
	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// TestTeamPolicyByGroupE2E: the mcpgw binary in team mode with a server
// visible only to group eng ("visibleTo") and approvals asked of group
// contractors ("approveToolsFor"), and the TypeScript SDK client as alice
// (eng) and bob (contractors), with tokens of the test issuer. For bob the
// eng server is gone from every door, in each mode — tools, prompts,
// resources, templates, completion, subscriptions, instructions, the mcp
// tool's list, search, describe, connect and call, ToolSearch, a script,
// the status page and its report, its actions and logs, `mcpgw call` —
// while alice reaches it through each; bob's call of a tool his group
// must have approved waits for a decision, and alice's of the same tool
// does not.
func TestTeamPolicyByGroupE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	server := func(instructions string, extra map[string]any) map[string]any {
		s := map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}, "env": map[string]any{
			fakeupstream.EnvInstructions: instructions, fakeupstream.EnvProtocols: "2025-11-25"}}
		for k, v := range extra {
			s[k] = v
		}
		return s
	}
	iss := e2e.NewIssuer(t)
	d := e2e.StartTeamDaemon(t, iss, e2e.Team{
		Block: map[string]any{"groupsClaim": "groups"},
		Servers: map[string]any{
			"alpha": server("ALPHA-INSTRUCTIONS", map[string]any{"approveToolsFor": map[string]any{"group:contractors": []string{"add"}}}),
			"hush":  server("HUSH-INSTRUCTIONS", map[string]any{"visibleTo": []string{"group:eng"}}),
		},
		Settings: map[string]any{"approvalTimeoutMs": 120000},
	})
	token := func(user, group string) string {
		c := iss.Claims(user, e2e.TeamAudience)
		c["groups"] = []string{group}
		return testissuer.Sign(iss.SigningKey(), c)
	}
	alice, bob := token("alice", "eng"), token("bob", "contractors")
	as := func(token, mode string) e2e.Target {
		return e2e.Target{URL: d.MCPURL() + "?mode=" + mode, Headers: map[string]string{"Authorization": "Bearer " + token}}
	}
	get := func(token, path string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, d.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	e2e.PollUntil(t, "both servers' prompts", func() bool {
		r := e2e.RunClient(t, as(alice, "proxy"), []e2e.Step{e2e.MCPCall(map[string]any{"prompts": true})})
		return strings.Contains(r[0].Text(), "alpha_greet") && strings.Contains(r[0].Text(), "hush_greet")
	})
	leaks := func(s string) bool { return strings.Contains(strings.ToLower(s), "hush") }

	t.Run("page and CLI", func(t *testing.T) {
		for _, path := range []string{"/", "/-/status"} {
			code, body := get(bob, path)
			if code != http.StatusOK || leaks(body) || !strings.Contains(body, "alpha") {
				t.Errorf("GET %s as bob: %d, names the eng server %v", path, code, leaks(body))
			}
			if code, body := get(alice, path); code != http.StatusOK || !strings.Contains(body, "hush") {
				t.Errorf("GET %s as alice: %d, without the eng server", path, code)
			}
		}
		if code, body := get(bob, "/-/logs?server=hush"); code != http.StatusNotFound || strings.Contains(body, "HUSH") {
			t.Errorf("GET /-/logs?server=hush as bob: %d %q", code, body)
		}
		if code, _ := get(alice, "/-/logs?server=hush"); code != http.StatusOK {
			t.Errorf("GET /-/logs?server=hush as alice: %d", code)
		}
		for _, action := range []string{"/-/connect", "/-/disable", "/-/login"} {
			req, _ := http.NewRequest(http.MethodPost, d.URL+action+"?server=hush", nil)
			req.Header.Set("Authorization", "Bearer "+bob)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("POST %s?server=hush as bob: %s, want 404", action, resp.Status)
			}
		}
		if out, err := d.CLIAs(t, bob, "status"); err != nil || leaks(out) || !strings.Contains(out, "alpha") {
			t.Errorf("mcpgw status as bob: %v\n%s", err, out)
		}
		if out, err := d.CLIAs(t, bob, "call", "hush_echo", `{"message":"x"}`); err == nil || strings.Contains(out, "HUSH") {
			t.Errorf("mcpgw call hush_echo as bob: %v\n%s", err, out)
		}
		if out, err := d.CLIAs(t, alice, "call", "hush_echo", `{"message":"from alice"}`); err != nil || !strings.Contains(out, "from alice") {
			t.Errorf("mcpgw call hush_echo as alice: %v\n%s", err, out)
		}
	})

	common := []e2e.Step{
		{Op: "serverInfo"},
		{Op: "listTools"},
		{Op: "listPrompts"},
		{Op: "listResources"},
		{Op: "listResourceTemplates"},
		{Op: "getPrompt", Name: "alpha_greet", Arguments: map[string]any{"name": "Ada"}},
	}
	// Each of these reaches the eng server for alice and fails for bob.
	doors := []e2e.Step{
		{Op: "getPrompt", Name: "hush_greet", Arguments: map[string]any{"name": "Ada"}},
		{Op: "readResource", URI: "mcpgw://hush/test://hello"},
		{Op: "complete", Ref: map[string]any{"type": "ref/prompt", "name": "hush_greet"}, Argument: map[string]any{"name": "name", "value": "A"}},
		{Op: "subscribe", URI: "mcpgw://hush/test://hello"},
	}
	for _, mode := range []struct {
		name  string
		steps []e2e.Step // the mode's own, after the doors; check reads them
		check func(t *testing.T, user string, r []e2e.StepResult)
	}{
		{"proxy", []e2e.Step{
			e2e.MCPCall(map[string]any{}),
			e2e.MCPCall(map[string]any{"search": "greet echo hello"}),
			e2e.MCPCall(map[string]any{"server": "hush"}),
			e2e.MCPCall(map[string]any{"connect": "hush"}),
			e2e.MCPCall(map[string]any{"tool": "hush_echo", "args": map[string]any{"message": "called"}}),
			e2e.MCPCall(map[string]any{"script": `return await tools.call("hush_echo", {message: "scripted"})`}),
		}, func(t *testing.T, user string, r []e2e.StepResult) {
			if user == "bob" {
				for _, i := range []int{0, 1} {
					if r[i].IsError() || leaks(string(r[i].Result)) {
						t.Errorf("the mcp tool names the eng server to bob: %s", r[i])
					}
				}
				if got := r[2].Text(); !r[2].IsError() || !strings.Contains(got, `Unknown server "hush". Servers: alpha.`) {
					t.Errorf("bob describing the eng server: %s", r[2])
				}
				for _, i := range []int{3, 4, 5} {
					got := r[i].Text()
					refused := r[i].IsError() || (i == 5 && strings.Contains(got, `"code":"unknown_tool"`))
					if !refused || strings.Contains(got, "called") || strings.Contains(got, "scripted") || strings.Contains(got, "HUSH") {
						t.Errorf("bob reaching the eng server through the mcp tool: %s", r[i])
					}
				}
				return
			}
			if got := r[2].Text(); r[2].IsError() || !strings.Contains(got, "HUSH-INSTRUCTIONS") {
				t.Errorf("alice describing the eng server: %s", r[2])
			}
			if !strings.Contains(r[4].Text(), "called") || !strings.Contains(r[5].Text(), "scripted") {
				t.Errorf("alice's calls of the eng server: %s / %s", r[4], r[5])
			}
		}},
		{"toolsearch", []e2e.Step{
			e2e.Call("ToolSearch", map[string]any{"query": "greet echo hello"}),
			e2e.Call("ToolSearch", map[string]any{"query": "select:hush_echo"}),
		}, func(t *testing.T, user string, r []e2e.StepResult) {
			found := leaks(string(r[0].Result))
			activated := strings.Contains(r[1].Text(), "hush_echo") && !r[1].IsError() && !strings.Contains(strings.ToLower(r[1].Text()), "no tool")
			if user == "bob" && (found || strings.Contains(r[1].Text(), "HUSH")) {
				t.Errorf("ToolSearch shows bob the eng server: %s / %s", r[0], r[1])
			}
			if user == "alice" && (!found || !activated) {
				t.Errorf("ToolSearch hides the eng server from alice: %s / %s", r[0], r[1])
			}
		}},
		{"direct", nil, func(*testing.T, string, []e2e.StepResult) {}},
	} {
		for _, who := range []struct{ name, token string }{{"alice", alice}, {"bob", bob}} {
			t.Run(mode.name+"/"+who.name, func(t *testing.T) {
				steps := append(append(append([]e2e.Step{}, common...), doors...), mode.steps...)
				r := e2e.RunClient(t, as(who.token, mode.name), steps)
				sees := who.name == "alice"
				if leaks(string(r[0].Result)) != sees {
					t.Errorf("initialize names the eng server: %v, want %v: %s", !sees, sees, r[0])
				}
				if mode.name == "direct" {
					names := strings.Join(e2e.ToolNames(t, r[1]), " ")
					if strings.Contains(names, "hush_echo") != sees || !strings.Contains(names, "alpha_echo") {
						t.Errorf("%s lists %s", who.name, names)
					}
				}
				for _, i := range []int{2, 3, 4} {
					if !r[i].OK || leaks(string(r[i].Result)) != sees {
						t.Errorf("a list names the eng server: %v, want %v: %s", !sees, sees, r[i])
					}
				}
				if !r[5].OK || !strings.Contains(string(r[5].Result), "Say hello to Ada.") {
					t.Errorf("alpha's prompt: %s", r[5])
				}
				for i, step := range doors {
					if got := r[len(common)+i]; got.OK != sees {
						t.Errorf("%s %s: OK %v, want %v: %s", who.name, step.Op, got.OK, sees, got)
					}
				}
				mode.check(t, who.name, r[len(common)+len(doors):])
			})
		}
	}

	t.Run("approvals by group", func(t *testing.T) {
		add := e2e.MCPCall(map[string]any{"tool": "alpha_add", "args": map[string]any{"a": 2, "b": 3}, "timeoutMs": 120000})
		// alice's group is asked nothing: her call completes with no
		// one to approve it.
		if r := e2e.RunClient(t, as(alice, "proxy"), []e2e.Step{add}); r[0].IsError() || !strings.HasPrefix(r[0].Text(), "5") {
			t.Errorf("alice's call of alpha_add: %s", r[0])
		}
		waiting := e2e.GoClient(t, as(bob, "proxy"), []e2e.Step{add})
		var pending api.PendingApproval
		e2e.PollUntil(t, "bob's pending approval", func() bool {
			code, body := get(bob, "/-/approvals")
			var list []api.PendingApproval
			if code != http.StatusOK || json.Unmarshal([]byte(body), &list) != nil || len(list) == 0 {
				return false
			}
			pending = list[0]
			return true
		})
		if pending.User != "bob" || pending.Tool != "add" || !strings.Contains(pending.Rule, `approveToolsFor."group:contractors"`) {
			t.Errorf("pending approval %+v, want bob's call of add under approveToolsFor", pending)
		}
		req, _ := http.NewRequest(http.MethodPost, d.URL+"/-/approve?id="+pending.ID+"&decision=once", nil)
		req.Header.Set("Authorization", "Bearer "+bob)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("approving as bob: %s", resp.Status)
		}
		if r := (<-waiting).Check(t); r[0].IsError() || !strings.HasPrefix(r[0].Text(), "5") {
			t.Errorf("bob's approved call: %s", r[0])
		}
	})

	// Their calls count by user: alice's three of the eng server (the
	// CLI's, the mcp tool's, the script's) and her add, bob's add.
	t.Run("metrics by user", func(t *testing.T) {
		resp, err := http.Get(d.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, series := range []string{
			`mcpgw_tool_calls_total{outcome="ok",server="hush",user="alice"} 3`,
			`mcpgw_tool_calls_total{outcome="ok",server="alpha",user="alice"} 1`,
			`mcpgw_tool_calls_total{outcome="ok",server="alpha",user="bob"} 1`,
		} {
			if !strings.Contains(string(body), series+"\n") {
				t.Errorf("/metrics without %s", series)
			}
		}
		if strings.Contains(string(body), `server="hush",user="bob"`) {
			t.Error("/metrics counts a call of bob's to the eng server")
		}
	})
}
