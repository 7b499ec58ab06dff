//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// TestSubscriptionAfterUpstreamKillE2E: the TypeScript SDK client,
// subscribed through mcpgw to a resource of a stdio server, still hears
// of it after the server's process is killed. mcpgw starts another
// process of its own accord (the status report shows it connected before
// any call), subscribes it again, once, before calls reach it, and says
// so in its log; the new process's update reaches the client. At both
// protocols the server may speak, which subscribe differently (a request;
// a listen stream).
func TestSubscriptionAfterUpstreamKillE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			config := e2e.WriteConfig(t, dir, map[string]any{
				"mine": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"},
					"env": map[string]any{fakeupstream.EnvProtocols: protocol}},
			}, map[string]any{"mode": "direct"})
			d := e2e.StartDaemon(t, dir, config)
			subscribed, restarted := filepath.Join(dir, "subscribed"), filepath.Join(dir, "restarted")
			touch := e2e.Call("mine_touch", map[string]any{"uri": "test://hello"})
			heard := e2e.Step{Op: "waitNotification", Method: "notifications/resources/updated", URI: "test://hello", TimeoutMs: 60000}
			run := e2e.GoClient(t, e2e.Target{URL: d.MCPURL()}, []e2e.Step{
				{Op: "listTools"}, // waits for the server's discovery
				e2e.Call("mine_pid", nil),
				{Op: "subscribe", URI: "test://hello"},
				touch, heard,
				{Op: "signal", Path: subscribed},
				{Op: "waitSignal", Path: restarted, TimeoutMs: 120000},
				touch, heard,
				{Op: "notifications"},
				e2e.Call("mine_pid", nil),
				e2e.Call("mine_subscriptions", nil),
			})

			mine := func() api.ServerReport {
				r := d.Report(t)
				if len(r.Servers) != 1 {
					t.Fatalf("status: %+v", r.Servers)
				}
				return r.Servers[0]
			}
			e2e.PollUntil(t, "the client's subscription", func() bool {
				_, err := os.Stat(subscribed)
				return err == nil
			})
			first := mine().PID
			if first <= 0 {
				t.Fatalf("status shows no process of mine: %+v", mine())
			}
			if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			var second int
			e2e.PollUntil(t, "another process of mine, started without a call", func() bool {
				s := mine()
				second = s.PID
				return s.State == "connected" && second > 0 && second != first
			})
			if err := os.WriteFile(restarted, nil, 0o600); err != nil {
				t.Fatal(err)
			}

			res := (<-run).Check(t)
			for _, r := range res {
				if !r.OK || r.IsError() {
					t.Fatalf("step %d (%s) failed: %v", r.Step, r.Op, r)
				}
			}
			if got := res[1].Text(); got != strconv.Itoa(first) {
				t.Errorf("the client's first call reached process %s, want %d", got, first)
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
				t.Errorf("the client heard of %v, want test://hello before the kill and after", updates)
			}
			if got := res[len(res)-2].Text(); got != strconv.Itoa(second) {
				t.Errorf("the client's last call reached process %s, want %d, the one started after the kill", got, second)
			}
			if got := res[len(res)-1].Text(); got != "test://hello" {
				t.Errorf("the new process holds %q, want test://hello once", got)
			}
			var logged bool
			for _, line := range strings.Split(d.Proc.Output.String(), "\n") {
				if strings.Contains(line, "level=DEBUG") && strings.Contains(line, "subscribed the new connection to the resources subscribers hold") &&
					strings.Contains(line, "test://hello") {
					logged = true
				}
			}
			if !logged {
				t.Error("the daemon's log does not say it subscribed the new process again")
			}
		})
	}
}
