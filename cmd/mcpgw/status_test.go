package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestRenderStatusGolden(t *testing.T) {
	t.Setenv("HOME", "/home/other") // paths under it would print as ~
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		report api.Report
	}{
		{"status-empty", api.Report{Version: "1.0.0", PID: 4242, StartedAt: now.Add(-90 * time.Second), Servers: []api.ServerReport{}}},
		{"status-busy", api.Report{
			Version: "1.0.0", PID: 4242, StartedAt: now.Add(-26*time.Hour - 3*time.Minute), Sessions: 3, Tools: 61,
			Config: "/home/u/.config/mcpgw/mcp.json", Cache: "/home/u/.pi/agent/mcp-cache.json",
			LastReload: &api.ReloadInfo{At: now.Add(-5 * time.Minute), OK: false, Error: "/home/u/.config/mcpgw/mcp.json: servers.github.url: missing host"},
			Servers: []api.ServerReport{
				{Name: "browser", State: "connected", PID: 5150, Tools: 21, Calls: 140, Errors: 2, LastError: "timeout after 2m0s\nmore", Source: "/home/u/.config/mcpgw/mcp.json"},
				{Name: "github", State: "failed", Tools: 26, Errors: 5, LastError: "connect: 401 Unauthorized", NextRetry: now.Add(95 * time.Second), Source: "/home/u/.cursor/mcp.json"},
				{Name: "search", State: "cached", Tools: 14, Source: "/home/u/.config/mcpgw/mcp.json"},
				{Name: "xcode", State: "disabled", Source: "/home/u/.config/mcpgw/mcp.json"},
				{Name: "slack", State: "disabled", DisabledHere: true, Source: "/home/u/.config/mcpgw/mcp.json"},
				{Name: "linear", State: "needs-auth", Login: "none", LastError: "not logged in; run: mcpgw login linear", Source: "/home/u/.config/mcpgw/mcp.json"},
				{Name: "notion", State: "connected", Tools: 9, Login: "logged in", TokenExpiry: now.Add(42 * time.Minute), Source: "/home/u/.config/mcpgw/mcp.json"},
			},
			Warnings: []string{`servers.github.comand: unknown field (did you mean "command"?)`},
			Scripts: []api.ScriptReport{
				{ID: "s-0a1b2c3d4e5f", Session: "pi-7", Client: "pi", Started: now.Add(-2 * time.Minute), DurationMs: 41.6, Outcome: "ok",
					Calls: []api.ScriptCall{{Tool: "github_list_issues", OK: true}, {Tool: "github_get_issue", OK: true}, {Tool: "github_get_issue", Error: "tool_error"}}},
				{ID: "s-99887766aabb", Session: "http-3", Started: now.Add(-10 * time.Minute), DurationMs: 30000, Outcome: "timeout",
					Error: "the script ran past its deadline of 30s"},
			},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			writeStatus(&buf, &tt.report, now)
			path := filepath.Join("testdata", tt.name+".golden")
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("status output differs from %s:\n--- got\n%s--- want\n%s", path, buf.Bytes(), want)
			}
		})
	}
}

func TestTildePath(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	for in, want := range map[string]string{
		"/home/u/.config/mcpgw/mcp.json": "~/.config/mcpgw/mcp.json",
		"/home/u":                        "~",
		"/home/user/x":                   "/home/user/x",
		"/etc/mcpgw.json":                "/etc/mcpgw.json",
		"":                               "",
	} {
		if got := tildePath(in); got != want {
			t.Errorf("tildePath(%q) = %q, want %q", in, got, want)
		}
	}
}
