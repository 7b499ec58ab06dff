package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/registry"
)

// TestCheckWordsTeamPolicy: check prints the rules by user and group as
// the daemon applies them in team mode, and says that they do nothing
// without a team block.
func TestCheckWordsTeamPolicy(t *testing.T) {
	srv := &registry.Server{Command: "x", VisibleTo: []string{"group:eng", "user:carol"},
		ApproveToolsFor: []registry.PrincipalApproval{{Principal: "group:contractors", Approval: registry.Approval{Set: true, All: true}}}}
	team := &registry.Config{Team: &registry.Team{Issuer: "https://login.example.com", Audience: "mcpgw"}}
	want := []string{
		"visible only to group:eng, user:carol (team mode; hidden from everyone else)",
		"approveTools true for group:contractors (team mode; adds to approveTools)",
	}
	if got := serverPolicyIn(srv, team); !slices.Equal(got, want) {
		t.Errorf("team mode:\n%q\nwant\n%q", got, want)
	}
	want = []string{
		`visible to everyone: visibleTo ["group:eng", "user:carol"] has no effect without a team block`,
		"approveToolsFor group:contractors has no effect without a team block",
	}
	if got := serverPolicyIn(srv, &registry.Config{}); !slices.Equal(got, want) {
		t.Errorf("no team block:\n%q\nwant\n%q", got, want)
	}
}

// TestCheckWordsSettingsApproveToolsFor: the settings' approveToolsFor is
// on check's settings line, once, and not repeated on each server's.
func TestCheckWordsSettingsApproveToolsFor(t *testing.T) {
	cfg := &registry.Config{
		Team: &registry.Team{Issuer: "https://login.example.com", Audience: "mcpgw"},
		Settings: registry.Settings{ApproveToolsFor: []registry.PrincipalApproval{
			{Principal: "group:contractors", Approval: registry.Approval{Set: true, Destructive: true}}}},
		Servers: map[string]*registry.Server{"db": {Name: "db", URL: "https://db.example.com/mcp"}},
	}
	var b strings.Builder
	writePolicy(&b, cfg)
	const want = `approveTools "destructive" for group:contractors (team mode; adds to approveTools)`
	if n := strings.Count(b.String(), want); n != 1 {
		t.Errorf("check printed %q %d times, want once:\n%s", want, n, b.String())
	}
	if !strings.Contains(b.String(), "  settings: "+want+"; ") {
		t.Errorf("check's settings line does not hold %q:\n%s", want, b.String())
	}
	cfg.Team = nil
	b.Reset()
	writePolicy(&b, cfg)
	if !strings.Contains(b.String(), "approveToolsFor group:contractors has no effect without a team block") {
		t.Errorf("without a team block, check does not say the rule does nothing:\n%s", b.String())
	}
}

// TestStatusPerUser: `mcpgw status` says a server runs a process per user,
// how many are connected, and which is yours.
func TestStatusPerUser(t *testing.T) {
	now := time.Now()
	var b strings.Builder
	writeStatus(&b, &api.Report{Version: "v", Servers: []api.ServerReport{
		{Name: "mine", State: "connected", PID: 7, PerUser: true, UserProcesses: 2, YourState: "connected", YourPID: 9},
		{Name: "later", State: "idle-closed", PerUser: true},
		{Name: "tickets", State: "idle-closed", Transport: "http", PerUser: true, UserProcesses: 1},
	}}, now)
	for _, want := range []string{
		"connected (pid 7), a process per user: 2 connected, yours pid 9",
		"idle-closed, a process per user: 0 connected ",
		"idle-closed, a connection per user: 1 connected",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status without %q:\n%s", want, b.String())
		}
	}
}
