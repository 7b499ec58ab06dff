//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// TestSubscriptionAfterConfigEditE2E: the TypeScript SDK client,
// subscribed through mcpgw to a resource of a stdio server, still hears
// of it after the user adds an env var to the server's entry in mcp.json
// and the daemon reloads it: the server's identity changed, so mcpgw
// starts a new process, and the client's subscription moves to it,
// subscribed once before calls reach it. At both protocols the server may
// speak.
func TestSubscriptionAfterConfigEditE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			entry := func(env map[string]any) map[string]any {
				env[fakeupstream.EnvProtocols] = protocol
				return map[string]any{"mine": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}, "env": env}}
			}
			settings := map[string]any{"mode": "direct"}
			config := e2e.WriteConfig(t, dir, entry(map[string]any{}), settings)
			d := e2e.StartDaemon(t, dir, config)
			subscribed, reloaded := filepath.Join(dir, "subscribed"), filepath.Join(dir, "reloaded")
			touch := e2e.Call("mine_touch", map[string]any{"uri": "test://hello"})
			heard := e2e.Step{Op: "waitNotification", Method: "notifications/resources/updated", URI: "test://hello", TimeoutMs: 60000}
			run := e2e.GoClient(t, e2e.Target{URL: d.MCPURL()}, []e2e.Step{
				{Op: "listTools"}, // waits for the server's discovery
				e2e.Call("mine_pid", nil),
				{Op: "subscribe", URI: "test://hello"},
				touch, heard,
				{Op: "signal", Path: subscribed},
				{Op: "waitSignal", Path: reloaded, TimeoutMs: 120000},
				touch, heard,
				{Op: "notifications"},
				e2e.Call("mine_pid", nil),
				e2e.Call("mine_subscriptions", nil),
			})

			e2e.PollUntil(t, "the client's subscription", func() bool {
				_, err := os.Stat(subscribed)
				return err == nil
			})
			start := time.Now()
			e2e.WriteConfig(t, dir, entry(map[string]any{"EDITED": "1"}), settings)
			if info := d.WaitReload(t, start); !info.OK {
				t.Fatalf("reload after editing mine failed: %s", info.Error)
			}
			if err := os.WriteFile(reloaded, nil, 0o600); err != nil {
				t.Fatal(err)
			}

			res := (<-run).Check(t)
			for _, r := range res {
				if !r.OK || r.IsError() {
					t.Fatalf("step %d (%s) failed: %v", r.Step, r.Op, r)
				}
			}
			first, err := strconv.Atoi(res[1].Text())
			if err != nil {
				t.Fatalf("mine_pid before the edit = %q", res[1].Text())
			}
			var notes []struct {
				Method string
				Params struct{ URI string }
			}
			res[len(res)-3].Decode(t, &notes)
			var updates []string
			for _, n := range notes {
				if n.Method == "notifications/resources/updated" {
					updates = append(updates, n.Params.URI)
				}
			}
			if len(updates) != 2 || updates[0] != "test://hello" || updates[1] != "test://hello" {
				t.Errorf("the client heard of %v, want test://hello before the edit and after", updates)
			}
			if got := res[len(res)-2].Text(); got == strconv.Itoa(first) {
				t.Errorf("the client's last call reached process %s, the one from before the edit", got)
			}
			if got := res[len(res)-1].Text(); got != "test://hello" {
				t.Errorf("the new process holds %q, want test://hello once", got)
			}
		})
	}
}
