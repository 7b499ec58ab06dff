//go:build unix

package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// A client of the private subscriptions' tests: its target, and whether
// it is the one that touches (its process's) test://hello first.
type subClient struct {
	name   string
	target e2e.Target
	first  bool
}

// runPrivateSubs runs clients at once against a daemon whose server
// "mine" runs one process per session or per user. Each subscribes to
// test://hello and test://readme; then the first ones' process sends an
// update of test://hello, which they wait for; then each other client's
// process sends one of test://hello and then of test://readme, which it
// waits for; then the first ones' process sends one of test://readme,
// which they wait for. Each client's last update is thus of test://readme
// from its own process, sent after the other process's updates: an update
// of the other process would have reached it before. Files in dir order
// the clients' steps. It returns each client's resource updates (their
// URIs, in order), its process's PID and the subscriptions its process
// holds at the end.
func runPrivateSubs(t *testing.T, dir string, clients []subClient) (updates map[string][]string, pids, held map[string]string) {
	t.Helper()
	signal := func(name string) e2e.Step { return e2e.Step{Op: "signal", Path: filepath.Join(dir, name)} }
	await := func(name string) e2e.Step {
		return e2e.Step{Op: "waitSignal", Path: filepath.Join(dir, name), TimeoutMs: 60000}
	}
	touch := func(uri string) e2e.Step { return e2e.Call("mine_touch", map[string]any{"uri": uri}) }
	heard := func(uri string) e2e.Step {
		return e2e.Step{Op: "waitNotification", Method: "notifications/resources/updated", URI: uri, TimeoutMs: 60000}
	}
	var firsts, others []string
	for _, c := range clients {
		if c.first {
			firsts = append(firsts, c.name)
		} else {
			others = append(others, c.name)
		}
	}
	runs := map[string]<-chan e2e.ClientRun{}
	for _, c := range clients {
		steps := []e2e.Step{
			{Op: "listTools"}, // waits for the server's discovery
			e2e.Call("mine_pid", nil),
			{Op: "subscribe", URI: "test://hello"},
			{Op: "subscribe", URI: "test://readme"},
			signal(c.name + ".subscribed"),
		}
		for _, other := range clients {
			steps = append(steps, await(other.name+".subscribed"))
		}
		if c.first {
			if c.name == firsts[0] {
				steps = append(steps, touch("test://hello"))
			}
			steps = append(steps, heard("test://hello"), signal(c.name+".heard"))
			for _, other := range others {
				steps = append(steps, await(other+".done"))
			}
			if c.name == firsts[0] {
				steps = append(steps, touch("test://readme"))
			}
			steps = append(steps, heard("test://readme"))
		} else {
			for _, first := range firsts {
				steps = append(steps, await(first+".heard"))
			}
			steps = append(steps, touch("test://hello"), touch("test://readme"), heard("test://readme"), signal(c.name+".done"))
		}
		steps = append(steps, e2e.Step{Op: "notifications"}, e2e.Call("mine_subscriptions", nil))
		runs[c.name] = e2e.GoClient(t, c.target, steps)
	}

	updates, pids, held = map[string][]string{}, map[string]string{}, map[string]string{}
	for _, c := range clients {
		res := (<-runs[c.name]).Check(t)
		for _, r := range res {
			if !r.OK || r.IsError() {
				t.Fatalf("%s: step %d (%s) failed: %v", c.name, r.Step, r.Op, r)
			}
		}
		var notes []struct {
			Method string
			Params struct{ URI string }
		}
		res[len(res)-2].Decode(t, &notes)
		updates[c.name] = []string{}
		for _, n := range notes {
			if n.Method == "notifications/resources/updated" {
				updates[c.name] = append(updates[c.name], n.Params.URI)
			}
		}
		pids[c.name] = res[1].Text()
		held[c.name] = res[len(res)-1].Text()
	}
	return updates, pids, held
}

// TestPrivateSubscriptionsE2E: for a server with "isolation": "session",
// two sessions subscribed to the same resources each hear of the updates
// of their own process, and of no other; with "isolation": "user" in team
// mode, alice's two sessions hear of her process's updates, and bob of
// his alone. Each process holds its own subscriptions, once.
func TestPrivateSubscriptionsE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	both := []string{"test://hello", "test://readme"}

	t.Run("session", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		config := e2e.WriteConfig(t, dir, map[string]any{
			"mine": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}, "isolation": "session"},
		}, map[string]any{"mode": "direct"})
		d := e2e.StartDaemon(t, dir, config)
		target := e2e.Target{URL: d.MCPURL()}
		updates, pids, held := runPrivateSubs(t, t.TempDir(), []subClient{{"a", target, true}, {"b", target, false}})
		if pids["a"] == pids["b"] {
			t.Fatalf("both sessions reached process %s, want one each", pids["a"])
		}
		for _, who := range []string{"a", "b"} {
			if !slices.Equal(updates[who], both) {
				t.Errorf("session %s heard of %v, want %v, from its own process alone", who, updates[who], both)
			}
			if held[who] != "test://hello test://readme" {
				t.Errorf("session %s's process holds %q, want test://hello test://readme", who, held[who])
			}
		}
	})

	t.Run("user", func(t *testing.T) {
		t.Parallel()
		d := e2e.StartTeamDaemon(t, e2e.NewIssuer(t), e2e.Team{
			Servers: map[string]any{
				"mine": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}, "isolation": "user"},
			},
			Settings: map[string]any{"mode": "direct"},
		})
		as := d.As
		updates, pids, held := runPrivateSubs(t, t.TempDir(), []subClient{
			{"alice", as("alice"), true}, {"alice2", as("alice"), true}, {"bob", as("bob"), false},
		})
		if pids["alice"] != pids["alice2"] || pids["alice"] == pids["bob"] {
			t.Fatalf("alice's sessions reached processes %s and %s, bob's %s; want hers one, his another", pids["alice"], pids["alice2"], pids["bob"])
		}
		for _, who := range []string{"alice", "alice2", "bob"} {
			if !slices.Equal(updates[who], both) {
				t.Errorf("%s heard of %v, want %v, from the user's own process alone", who, updates[who], both)
			}
			if held[who] != "test://hello test://readme" {
				t.Errorf("%s's process holds %q, want test://hello test://readme, once", who, held[who])
			}
		}
	})
}
