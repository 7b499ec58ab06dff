package registry

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestApproveToolsValues(t *testing.T) {
	for _, tc := range []struct {
		value, want, err string
	}{
		{`true`, "true", ""},
		{`false`, "false", ""},
		{`"destructive"`, `"destructive"`, ""},
		{`["delete_*", "destructive"]`, `["destructive", "delete_*"]`, ""},
		{`["push"]`, `["push"]`, ""},
		{`"sometimes"`, "", `mcpServers.a.approveTools: "sometimes" is not true, false, "destructive" or a list of tool names`},
		{`3`, "", `mcpServers.a.approveTools: must be true, false, "destructive" or a list of tool names, got number`},
		{`["[bad"]`, "", `mcpServers.a.approveTools[0]`},
	} {
		cfg, err := Parse([]byte(`{"mcpServers": {"a": {"command": "x", "approveTools": `+tc.value+`}}}`), "mcp.json", &LoadOptions{Home: t.TempDir()})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("approveTools %s: error %v, want one containing %q", tc.value, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("approveTools %s: %v", tc.value, err)
			continue
		}
		if got := cfg.Servers["a"].ApproveTools.String(); got != tc.want {
			t.Errorf("approveTools %s reads as %s, want %s", tc.value, got, tc.want)
		}
	}
}

// policyView is a view of servers gh (with the given server fields) and
// web, each listing tools named by annotations: "ro" read-only, "safe"
// destructiveHint false, anything else unannotated.
func policyView(t *testing.T, settings, gh string) *View {
	t.Helper()
	cfg, err := Parse([]byte(`{"settings": {`+settings+`}, "mcpServers": {
		"gh": {"command": "gh"`+gh+`}, "web": {"command": "web"}}}`), "mcp.json", &LoadOptions{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	no := false
	tools := []*mcp.Tool{
		{Name: "get_issue", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		{Name: "add_label", Annotations: &mcp.ToolAnnotations{DestructiveHint: &no}},
		{Name: "delete_repo"},
		{Name: "push", Annotations: &mcp.ToolAnnotations{}},
	}
	c := NewCatalog(cfg)
	c.SetListings(map[string]*Listing{cfg.Servers["gh"].Hash: {Tools: tools}, cfg.Servers["web"].Hash: {Tools: tools}})
	return c.View()
}

func TestNeedsApproval(t *testing.T) {
	for _, tc := range []struct {
		name, settings, gh string
		want               []string // tools that need approval, as mcpgw names them
	}{
		{"nothing set", ``, ``, nil},
		{"settings true", `"approveTools": true`, ``,
			[]string{"gh_add_label", "gh_delete_repo", "gh_get_issue", "gh_push", "web_add_label", "web_delete_repo", "web_get_issue", "web_push"}},
		{"destructive: unannotated and not-read-only", `"approveTools": "destructive"`, ``,
			[]string{"gh_delete_repo", "gh_push", "web_delete_repo", "web_push"}},
		{"settings globs over shown names", `"approveTools": ["gh_delete_*", "web/push"]`, ``, []string{"gh_delete_repo", "web_push"}},
		{"server's own names", ``, `, "approveTools": ["delete_*"]`, []string{"gh_delete_repo"}},
		{"server overrides settings", `"approveTools": true`, `, "approveTools": false`,
			[]string{"web_add_label", "web_delete_repo", "web_get_issue", "web_push"}},
		{"autoApprove wins", `"approveTools": true`, `, "autoApprove": ["delete_repo", "push"]`,
			[]string{"gh_add_label", "gh_get_issue", "web_add_label", "web_delete_repo", "web_get_issue", "web_push"}},
	} {
		v := policyView(t, tc.settings, tc.gh)
		var got []string
		for _, tool := range v.Tools {
			if rule, need := v.NeedsApproval(tool); need {
				got = append(got, tool.Name)
				if !strings.HasSuffix(rule.Field, "approveTools") || rule.Value == "" {
					t.Errorf("%s: %s needs approval by rule %+v", tc.name, tool.Name, rule)
				}
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: need approval %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestSettingsExcludeTools(t *testing.T) {
	v := policyView(t, `"excludeTools": ["*_delete_*", "web/push"]`, ``)
	var names []string
	for _, tool := range v.Tools {
		names = append(names, tool.Name)
	}
	want := []string{"gh_add_label", "gh_get_issue", "gh_push", "web_add_label", "web_get_issue"}
	if !slices.Equal(names, want) {
		t.Errorf("tools %q, want %q", names, want)
	}
	if _, ok := v.Lookup("gh_delete_repo"); ok {
		t.Error("an excluded tool can be looked up")
	}
}

func TestServerEnv(t *testing.T) {
	base := []string{"PATH=/bin", "HOME=/h", "MCPGW_TOKEN=secret", "MCPGW_URL=http://x", "GITHUB_TOKEN=gh", "TERM=xterm", "OVER=old"}
	yes, no := true, false
	for _, tc := range []struct {
		inherit *bool
		want    []string
	}{
		{nil, []string{"PATH=/bin", "HOME=/h", "GITHUB_TOKEN=gh", "TERM=xterm", "OVER=new", "OWN=1"}},
		{&yes, []string{"PATH=/bin", "HOME=/h", "GITHUB_TOKEN=gh", "TERM=xterm", "OVER=new", "OWN=1"}},
		{&no, []string{"PATH=/bin", "HOME=/h", "TERM=xterm", "OVER=new", "OWN=1"}},
	} {
		srv := &Server{Env: map[string]string{"OWN": "1", "OVER": "new"}, InheritEnv: tc.inherit}
		if got := ServerEnv(srv, base); !slices.Equal(got, tc.want) {
			t.Errorf("inheritEnv %v: %q, want %q", tc.inherit, got, tc.want)
		}
	}
	// A server's own env may set an MCPGW_ variable (the user wrote it).
	srv := &Server{Env: map[string]string{"MCPGW_TESTSERVER": "1"}}
	if got := ServerEnv(srv, base); !slices.Contains(got, "MCPGW_TESTSERVER=1") || slices.Contains(got, "MCPGW_TOKEN=secret") {
		t.Errorf("explicit env: %q", got)
	}
}

func TestInheritEnvFromSettings(t *testing.T) {
	cfg, err := Parse([]byte(`{"settings": {"inheritEnv": false}, "mcpServers": {
		"a": {"command": "a"}, "b": {"command": "b", "inheritEnv": true}}}`), "mcp.json", &LoadOptions{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Servers["a"].InheritsEnv() || !cfg.Servers["b"].InheritsEnv() {
		t.Errorf("inheritEnv: a %v (want false, from settings), b %v (want true, its own)", cfg.Servers["a"].InheritsEnv(), cfg.Servers["b"].InheritsEnv())
	}
}

// TestImportedRestrictions: every import format's way of restricting
// tools becomes mcpgw's, one format each.
func TestImportedRestrictions(t *testing.T) {
	for _, tc := range []struct {
		kind, file, data string
		check            func(t *testing.T, s *Server)
	}{
		{ImportPi, ".pi/agent/mcp.json", `{"mcpServers": {"s": {"command": "x", "toolExposure": {"delete_*": "hidden", "get_*": "direct"}}}}`,
			func(t *testing.T, s *Server) {
				if !slices.Equal(s.ExcludeTools, []string{"delete_*"}) {
					t.Errorf("toolExposure hidden: excludeTools %q", s.ExcludeTools)
				}
			}},
		{ImportPi, ".pi/agent/mcp.json", `{"mcpServers": {"s": {"command": "x", "exposure": "hidden"}}}`,
			func(t *testing.T, s *Server) {
				if !slices.Equal(s.ExcludeTools, []string{"*"}) {
					t.Errorf("exposure hidden: excludeTools %q", s.ExcludeTools)
				}
			}},
		{ImportPi, ".pi/agent/mcp.json", `{"settings": {"approveTools": ["s_delete_*"], "excludeTools": ["s_drop"]}, "mcpServers": {"s": {"command": "x", "approveTools": true, "excludeTools": ["a"]}, "t": {"command": "y"}}}`,
			func(t *testing.T, s *Server) {
				if s.ApproveTools.String() != "true" || !slices.Equal(s.ExcludeTools, []string{"a", "s_drop"}) {
					t.Errorf("the adapter's approveTools/excludeTools: %s, %q", s.ApproveTools, s.ExcludeTools)
				}
			}},
		{ImportCursor, ".cursor/mcp.json", `{"mcpServers": {"s": {"command": "x", "autoApprove": ["read_file"]}}}`,
			func(t *testing.T, s *Server) {
				if !slices.Equal(s.AutoApprove, []string{"read_file"}) {
					t.Errorf("Cursor's autoApprove: %q", s.AutoApprove)
				}
			}},
		{ImportClaudeCode, ".claude.json", `{"mcpServers": {"s": {"command": "x", "autoApprove": ["a"], "alwaysAllow": ["b"]}}}`,
			func(t *testing.T, s *Server) {
				if !slices.Equal(s.AutoApprove, []string{"a", "b"}) {
					t.Errorf("autoApprove and alwaysAllow: %q", s.AutoApprove)
				}
			}},
		{ImportCodex, ".codex/config.toml", "[mcp_servers.s]\ncommand = \"x\"\nenabled_tools = [\"a\", \"b\"]\ndisabled_tools = [\"b\"]\n",
			func(t *testing.T, s *Server) {
				if !slices.Equal(s.IncludeTools, []string{"a", "b"}) || !slices.Equal(s.ExcludeTools, []string{"b"}) {
					t.Errorf("Codex enabled_tools/disabled_tools: %q / %q", s.IncludeTools, s.ExcludeTools)
				}
			}},
		{ImportWindsurf, ".codeium/windsurf/mcp_config.json", `{"mcpServers": {"s": {"command": "x", "disabledTools": ["rm"], "alwaysAllow": ["ls"]}}}`,
			func(t *testing.T, s *Server) {
				if !slices.Equal(s.ExcludeTools, []string{"rm"}) || !slices.Equal(s.AutoApprove, []string{"ls"}) {
					t.Errorf("Windsurf disabledTools/alwaysAllow: %q / %q", s.ExcludeTools, s.AutoApprove)
				}
			}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			home := t.TempDir()
			writeFile(t, home, tc.file, tc.data)
			config := writeFile(t, home, ".config/mcpgw/mcp.json", `{"imports": ["`+tc.kind+`"]}`)
			cfg, err := Load(config, &LoadOptions{Home: home, Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			s := cfg.Servers["s"]
			if s == nil {
				t.Fatalf("no server s; warnings %q", cfg.Warnings)
			}
			tc.check(t, s)
			for _, w := range cfg.Warnings {
				if strings.Contains(w, "Exposure") || strings.Contains(w, "autoApprove") || strings.Contains(w, "alwaysAllow") {
					t.Errorf("a restriction was reported as ignored: %s", w)
				}
			}
		})
	}
}

// TestProjectOverrideEntries: a Pi project file that names a user's
// server with only exposure fields hides it in that project; it does not
// make it a server of its own, and "enabled": true cannot widen.
func TestProjectOverrideEntries(t *testing.T) {
	f := newProjectFixture(t)
	writeFile(t, f.proj, ".pi/mcp.json", `{"mcpServers": {
		"ctx7": {"toolExposure": {"resolve-*": "hidden"}, "approveTools": true},
		"cursor-a": {"exposure": "hidden"},
		"claude-a": {"enabled": false},
		"nowhere": {"exposure": "hidden"}
	}}`)
	f.trust(t, f.proj)
	base := f.load(t)
	cfg, err := base.WithProject(f.proj, base.Trust, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Servers["ctx7"]; !slices.Equal(s.ExcludeTools, []string{"resolve-*"}) || s.ApproveTools.String() != "true" || s.Command != "npx" {
		t.Errorf("ctx7 in the project: excludeTools %q, approveTools %s, command %q", s.ExcludeTools, s.ApproveTools, s.Command)
	}
	if s := cfg.Servers["cursor-a"]; !slices.Equal(s.ExcludeTools, []string{"*"}) {
		t.Errorf("cursor-a hidden in the project: excludeTools %q", s.ExcludeTools)
	}
	if cfg.Servers["claude-a"].Enabled {
		t.Error(`claude-a has "enabled": false in the project and is enabled`)
	}
	if _, ok := cfg.Servers["nowhere"]; ok {
		t.Error("an override entry became a server")
	}
	if !slices.ContainsFunc(cfg.Warnings, func(w string) bool { return strings.Contains(w, "nowhere: overrides a server no file defines") }) {
		t.Errorf("no warning about the override of an undefined server: %q", cfg.Warnings)
	}
	// Outside the project, and in the base config, nothing changed.
	if s := base.Servers["ctx7"]; len(s.ExcludeTools) != 0 || s.ApproveTools.Set || !base.Servers["claude-a"].Enabled {
		t.Errorf("the project's overrides leaked into the user's config: %+v", s)
	}
}

// memCache is a Cache in memory.
type memCache struct {
	stored map[string][]string // hash → names
	byName map[string]*Listing // name+hash → listing
}

func (m *memCache) Listing(name, hash string) (*Listing, bool) {
	l, ok := m.byName[name+"/"+hash]
	return l, ok
}

func (m *memCache) Store(names []string, hash string, l *Listing) error {
	m.stored[hash] = names
	for _, n := range names {
		m.byName[n+"/"+hash] = l
	}
	return nil
}
func (m *memCache) Path() string      { return "mem" }
func (m *memCache) Stats() CacheStats { return CacheStats{} }

// TestCatalogOwnsTheCache: live listings are written under every name of
// their identity, read back by a new catalogue, and a cached listing never
// replaces a live one.
func TestCatalogOwnsTheCache(t *testing.T) {
	cfg, err := Parse([]byte(`{"mcpServers": {"a": {"command": "x"}, "b": {"command": "x"}, "c": {"command": "y"}}}`), "mcp.json", &LoadOptions{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	mc := &memCache{stored: map[string][]string{}, byName: map[string]*Listing{}}
	c := NewCatalog(cfg)
	c.UseCache(mc)
	live := &Listing{Tools: []*mcp.Tool{{Name: "t", InputSchema: map[string]any{"type": "object"}}}, Source: SourceLive}
	v, err := c.Publish(cfg.Servers["a"], live)
	if err != nil {
		t.Fatal(err)
	}
	if got := mc.stored[cfg.Servers["a"].Hash]; !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("stored under %q, want both names of the identity", got)
	}
	if _, ok := v.Lookup("b_t"); !ok {
		t.Error("the alias's tool is not in the view")
	}
	// A new catalogue reads it.
	c2 := NewCatalog(cfg)
	c2.UseCache(mc)
	v2, found := c2.LoadCached(cfg)
	if _, ok := v2.Lookup("b_t"); !ok || len(found) != 1 {
		t.Errorf("LoadCached found %d listings", len(found))
	}
	// A cached listing does not replace the live one.
	cached := &Listing{Tools: []*mcp.Tool{{Name: "old", InputSchema: map[string]any{"type": "object"}}}, Source: SourceCache}
	mc.byName["a/"+cfg.Servers["a"].Hash] = cached
	if v, _ := c.LoadCached(cfg); func() bool { _, ok := v.Lookup("a_old"); return ok }() {
		t.Error("a cached listing replaced a live one")
	}
}

// TestSelfUnderAnotherName: an entry running this very binary's stdio
// shim is mcpgw pointing back at itself, whatever the binary is called.
func TestSelfUnderAnotherName(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	s := &Server{Name: "gw", Command: self, Args: []string{"stdio"}}
	if why := pointsAtSelf(s, &LoadOptions{}, "/x/mcp.json"); why == "" {
		t.Errorf("%s stdio is not seen as mcpgw itself", self)
	}
	s.Command = "/bin/sh"
	if why := pointsAtSelf(s, &LoadOptions{}, "/x/mcp.json"); why != "" {
		t.Errorf("/bin/sh stdio is seen as mcpgw: %s", why)
	}
}

// TestMisspeltTransport: an entry whose only transport field is misspelt
// is told which one it meant.
func TestMisspeltTransport(t *testing.T) {
	for field, want := range map[string]string{
		`"comand": "true"`:      `mcpServers.gh: needs command or url (did you mean "command" for "comand"?)`,
		`"URL": "http://x/mcp"`: `mcpServers.gh: needs command or url (did you mean "url" for "URL"?)`,
		`"args": ["x"]`:         `mcpServers.gh: needs command or url`,
	} {
		_, err := Parse([]byte(`{"mcpServers": {"gh": {`+field+`}}}`), "mcp.json", &LoadOptions{Home: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), want) || (!strings.Contains(want, "mean") && strings.Contains(err.Error(), "mean")) {
			t.Errorf("%s: %v, want %q", field, err, want)
		}
	}
}
