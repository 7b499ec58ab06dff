package registry

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestProjectNarrows: a trusted project's entry of a server the user
// defines narrows the user's definition and never widens it; its other
// fields are ignored with a warning naming them (never their values).
func TestProjectNarrows(t *testing.T) {
	const user = `"command": "srv", "env": {"TOKEN": "user-secret"}`
	tests := []struct {
		name           string
		settings, def  string // the user's settings and definition of srv
		proj           string // the project's entry of srv
		enabled        bool
		exclude        []string
		includeAlso    [][]string
		approve        string // Approval.String()
		autoApprove    []string
		ignoredFields  string // the fields the warning names; "" for no warning
		allowed, hides []string
	}{
		{name: "same command, more exclusions",
			def: user + `, "excludeTools": ["delete_*"]`, proj: user + `, "excludeTools": ["push", "delete_*"]`,
			enabled: true, exclude: []string{"delete_*", "push"}, approve: "unset",
			allowed: []string{"read"}, hides: []string{"delete_repo", "push"}},
		{name: "a whole definition keeps the user's exclusions and approvals",
			def: user + `, "excludeTools": ["delete_*"], "approveTools": "destructive"`, proj: `"command": "other", "args": ["--all"]`,
			enabled: true, exclude: []string{"delete_*"}, approve: `"destructive"`, ignoredFields: "command, args, env",
			hides: []string{"delete_repo"}},
		{name: "approvals add up",
			def: user + `, "approveTools": ["merge_*"]`, proj: user + `, "approveTools": ["destructive", "push"]`,
			enabled: true, approve: `["destructive", "merge_*", "push"]`},
		{name: "true stays true",
			def: user + `, "approveTools": true`, proj: user + `, "approveTools": ["push"]`,
			enabled: true, approve: "true"},
		{name: "settings' approvals count when the server has none",
			settings: `"approveTools": true`, def: user, proj: user + `, "approveTools": ["push"]`,
			enabled: true, approve: "true"},
		{name: "false lifts nothing",
			def: user + `, "approveTools": ["push"]`, proj: user + `, "approveTools": false`,
			enabled: true, approve: `["push"]`, ignoredFields: "approveTools false"},
		{name: "includeTools narrows includeTools",
			def: user + `, "includeTools": ["git_*"]`, proj: user + `, "includeTools": ["*_status", "other"]`,
			enabled: true, includeAlso: [][]string{{"*_status", "other"}}, approve: "unset",
			allowed: []string{"git_status"}, hides: []string{"git_push", "other"}},
		{name: "hidden, Pi's way",
			def: user, proj: user + `, "exposure": "hidden"`,
			enabled: true, exclude: []string{"*"}, approve: "unset", hides: []string{"read"}},
		{name: "disabled by the project",
			def: user, proj: user + `, "disabled": true`, approve: "unset"},
		{name: "enabled by the project: still disabled",
			def: user + `, "enabled": false`, proj: user + `, "enabled": true`, approve: "unset"},
		{name: "autoApprove is not taken",
			def: user + `, "approveTools": true, "autoApprove": ["read"]`, proj: user + `, "autoApprove": ["read", "push"]`,
			enabled: true, approve: "true", autoApprove: []string{"read"}, ignoredFields: "autoApprove"},
		{name: "another env, another url",
			def: user, proj: `"url": "https://example.com/mcp", "headers": {"X": "y"}`,
			enabled: true, approve: "unset", ignoredFields: "command, env, url, headers"},
		{name: "a restriction-only entry adds approvals",
			def: user + `, "approveTools": true`, proj: `"approveTools": ["push"]`,
			enabled: true, approve: "true"},
		{name: "a restriction-only entry narrows includeTools",
			def: user, proj: `"includeTools": ["read"], "toolExposure": {"write": "hidden"}`,
			enabled: true, exclude: []string{"write"}, includeAlso: [][]string{{"read"}}, approve: "unset",
			allowed: []string{"read"}, hides: []string{"write", "push"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
			config := writeFile(t, home, "mcp.json", fmt.Sprintf(`{"settings": {%s}, "mcpServers": {"srv": {%s}}}`, tt.settings, tt.def))
			projFile := writeFile(t, proj, ".mcp.json", fmt.Sprintf(`{"mcpServers": {"srv": {%s}, "own": {"command": "own"}}}`, tt.proj))
			opts := &LoadOptions{Home: home, Getenv: func(string) string { return "" }, TrustFile: filepath.Join(home, "trust.json")}
			ts, err := LoadTrust(opts.TrustFile)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ts.Add(proj); err != nil {
				t.Fatal(err)
			}
			base, err := Load(config, opts)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := base.WithProject(proj, ts, opts)
			if err != nil {
				t.Fatal(err)
			}
			s, u := cfg.Servers["srv"], base.Servers["srv"]
			if s.Command != "srv" || s.Env["TOKEN"] != "user-secret" || s.URL != "" || s.Source != config || s.Hash != u.Hash {
				t.Errorf("not the user's server: command %q, env %q, url %q, source %s, same hash %v", s.Command, s.Env, s.URL, s.Source, s.Hash == u.Hash)
			}
			if s.Enabled != tt.enabled || !slices.Equal(s.ExcludeTools, tt.exclude) || !slices.EqualFunc(s.IncludeAlso, tt.includeAlso, slices.Equal) ||
				s.ApproveTools.String() != tt.approve || !slices.Equal(s.AutoApprove, tt.autoApprove) {
				t.Errorf("enabled %v, excludeTools %q, includeAlso %q, approveTools %s, autoApprove %q\nwant     %v, %q, %q, %s, %q",
					s.Enabled, s.ExcludeTools, s.IncludeAlso, s.ApproveTools, s.AutoApprove,
					tt.enabled, tt.exclude, tt.includeAlso, tt.approve, tt.autoApprove)
			}
			for _, tool := range tt.allowed {
				if !s.toolAllowed(PrefixServer, tool) {
					t.Errorf("%s is hidden", tool)
				}
			}
			for _, tool := range tt.hides {
				if s.toolAllowed(PrefixServer, tool) {
					t.Errorf("%s is shown", tool)
				}
			}
			if len(u.PolicyNotes) != 0 || len(u.IncludeAlso) != 0 {
				t.Errorf("the base config's server was changed: %v", u.PolicyNotes)
			}
			if own := cfg.Servers["own"]; own == nil || own.Source != projFile {
				t.Errorf("the project's own server: %v", own)
			}
			var warns []string
			for _, w := range cfg.Warnings {
				if strings.Contains(w, "mcpServers.srv") {
					warns = append(warns, w)
				}
				if strings.Contains(w, "user-secret") {
					t.Errorf("a warning shows a value: %q", w)
				}
			}
			var want []string
			if tt.ignoredFields != "" {
				want = []string{projFile + ": mcpServers.srv: " + tt.ignoredFields + " ignored: the server is yours (" + config +
					"), and a project only restricts a server you define (excludeTools, includeTools, approveTools, exposure, disabled); give the project's another name to run it as well"}
			}
			if !slices.Equal(warns, want) {
				t.Errorf("warnings:\n got: %q\nwant: %q", warns, want)
			}
		})
	}
}
