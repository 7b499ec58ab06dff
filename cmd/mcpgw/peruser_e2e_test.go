//go:build unix

package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/internal/proctest"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// TestPerUserProcessE2E: a stdio server with "isolation": "user" in team
// mode runs one process per user. alice's two sessions reach one process,
// bob's a process of his own (their PIDs differ, and both run); what
// alice does in hers (two deletes, which the server counts) never reaches
// bob's, whose count stays 0; the status report shows each user their own
// process and how many run.
func TestPerUserProcessE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	d := e2e.StartTeamDaemon(t, e2e.NewIssuer(t), e2e.Team{Servers: map[string]any{
		"mine": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}, "isolation": "user",
			"env": map[string]any{fakeupstream.EnvPolicy: "1"}},
	}})
	alice, bob := d.Token("alice"), d.Token("bob")
	as := d.WithToken
	tool := func(name string, args map[string]any) e2e.Step {
		return e2e.MCPCall(map[string]any{"tool": "mine_" + name, "args": args})
	}
	pidOf := func(who string, r e2e.StepResult) int {
		pid, err := strconv.Atoi(strings.TrimSpace(r.Text()))
		if err != nil || r.IsError() {
			t.Fatalf("%s's pid: %s", who, r)
		}
		return pid
	}

	a := e2e.RunClient(t, as(alice), []e2e.Step{tool("pid", nil), tool("delete_thing", map[string]any{"name": "x"}), tool("delete_thing", map[string]any{"name": "y"}), tool("delete_count", nil)})
	a2 := e2e.RunClient(t, as(alice), []e2e.Step{tool("pid", nil), tool("delete_count", nil)}) // her second session
	b := e2e.RunClient(t, as(bob), []e2e.Step{tool("pid", nil), tool("delete_count", nil)})
	alicePID, alicePID2, bobPID := pidOf("alice", a[0]), pidOf("alice", a2[0]), pidOf("bob", b[0])
	if alicePID != alicePID2 {
		t.Errorf("alice's two sessions reached processes %d and %d, want one", alicePID, alicePID2)
	}
	if alicePID == bobPID {
		t.Fatalf("alice and bob share process %d", alicePID)
	}
	for _, pid := range []int{alicePID, bobPID} {
		if !proctest.Alive(pid) {
			t.Errorf("process %d does not run", pid)
		}
	}
	if got := a[3].Text(); got != "2" {
		t.Errorf("alice's deletes counted by her process: %q, want 2", got)
	}
	if got := a2[1].Text(); got != "2" {
		t.Errorf("alice's process seen from her second session: %q, want 2", got)
	}
	if got := b[1].Text(); got != "0" {
		t.Errorf("bob's process counted %q deletes, want 0: alice's calls reached it", got)
	}

	for _, who := range []struct {
		name, token string
		pid         int
	}{{"alice", alice, alicePID}, {"bob", bob, bobPID}} {
		r := e2e.DaemonStatusAs(t, d.URL, who.token)
		if len(r.Servers) != 1 {
			t.Fatalf("status as %s: %+v", who.name, r.Servers)
		}
		s := r.Servers[0]
		if !s.PerUser || s.UserProcesses != 2 || s.YourState != "connected" || s.YourPID != who.pid {
			t.Errorf("status as %s: perUser %v, %d user processes, yours %s pid %d; want 2, connected pid %d",
				who.name, s.PerUser, s.UserProcesses, s.YourState, s.YourPID, who.pid)
		}
	}
}
