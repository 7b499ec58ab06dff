package registry

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// importHome is testdata/imports/home: a home directory holding one config
// file of every tool mcpgw imports from.
func importHome(t *testing.T) string {
	t.Helper()
	return absTestdata(t, "imports/home")
}

var importEnv = map[string]string{"GITHUB_TOKEN": "gh", "PI_TOKEN": "pt", "WEB_KEY": "wk", "FIGMA_TOKEN": "ft"}

func importOptions(t *testing.T, env map[string]string) *LoadOptions {
	t.Helper()
	return &LoadOptions{Getenv: func(k string) string { return env[k] }, Home: importHome(t), Listen: "127.0.0.1:7332"}
}

// writeFile writes data to dir/name, creating directories, and returns the
// file's path.
func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// stdio and remote build expected servers with the defaults Load applies.
func stdio(name, source, command string, args ...string) *Server {
	return &Server{Name: name, Command: command, Args: args, Enabled: true, Lifecycle: LifecycleLazy, IdleTimeout: DefaultIdleTimeout, Source: source}
}

func remote(name, source, url string) *Server {
	return &Server{Name: name, URL: url, Enabled: true, Lifecycle: LifecycleLazy, IdleTimeout: DefaultIdleTimeout, Source: source}
}

func with(s *Server, f func(*Server)) *Server { f(s); return s }

// TestImportFormats imports each kind alone from testdata/imports/home and
// checks the exact servers and warnings.
func TestImportFormats(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the fixture home holds the Linux locations of Claude Desktop and VS Code")
	}
	home := importHome(t)
	h := func(rel string) string { return filepath.Join(home, rel) }
	tests := []struct {
		kind  string
		want  []*Server
		warns []string
	}{
		{ImportPi, []*Server{
			stdio("pi-fs", h(".pi/agent/mcp.json"), "npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"),
			with(stdio("pi-time", h(".pi/agent/mcp.json"), "uvx", "mcp-server-time"), func(s *Server) {
				s.Description = "Current time and time zones"
				s.Env = map[string]string{"TZ_TOKEN": "!pass show tz"}
				s.SearchKeywords = map[string][]string{"get_time": {"clock", "now"}}
			}),
			with(remote("pi-remote", h(".pi/agent/mcp.json"), "https://mcp.example.com/mcp"), func(s *Server) {
				s.Headers = map[string]string{"Authorization": "Bearer pt"}
			}),
			stdio("shared", h(".pi/agent/mcp.json"), "from-pi"),
			with(stdio("pi-local", h(".pi/agent/settings.json"), "bunx", "some-mcp", "--flag"), func(s *Server) {
				s.Env = map[string]string{"LEVEL": "1"}
				s.Enabled = false
			}),
			with(remote("pi-web", h(".pi/agent/settings.json"), "https://web.example.com/mcp"), func(s *Server) {
				s.Headers = map[string]string{"X-Key": "wk"}
			}),
			stdio("pi-plain", h(".pi/agent/settings.json"), "node", "server.js"),
		}, []string{
			h(".pi/agent/mcp.json") + ": imports: not followed from this file; list them in mcpgw's own imports",
		}},
		{ImportCursor, []*Server{
			with(remote("cursor-github", h(".cursor/mcp.json"), "https://api.githubcopilot.com/mcp"), func(s *Server) {
				s.Headers = map[string]string{"Authorization": "Bearer gh"}
			}),
			with(stdio("cursor-tool", h(".cursor/mcp.json"), h("bin/tool"), "--port", "8080"), func(s *Server) {
				s.Env = map[string]string{"DEBUG": "true"}
			}),
			stdio("shared", h(".cursor/mcp.json"), "from-cursor"),
		}, nil},
		{ImportClaudeCode, []*Server{
			stdio("claude-first", h(".claude/mcp.json"), "claude-first"),
			stdio("claude-user", h(".claude/mcp.json"), "wins-over-dot-claude-json"),
			remote("claude-sse", h(".claude.json"), "http://localhost:9000/sse"),
		}, nil},
		{ImportClaudeDesktop, []*Server{
			stdio("desktop-memory", h(".config/Claude/claude_desktop_config.json"), "npx", "-y", "@modelcontextprotocol/server-memory"),
		}, nil},
		{ImportCodex, []*Server{
			with(stdio("codex-docs", h(".codex/config.toml"), "docs-server", "--port", "4000"), func(s *Server) {
				s.Env = map[string]string{"API_KEY": "value"}
				s.StartupTimeout = 20 * time.Second
				s.RequestTimeout = 45500 * time.Millisecond
				s.IncludeTools = []string{"search"}
				s.PolicyNotes = []string{`enabled_tools ["search"] → includeTools`}
			}),
			with(remote("codex-figma", h(".codex/config.toml"), "https://mcp.figma.com/mcp"), func(s *Server) {
				s.Auth = AuthBearer
				s.BearerTokenEnv = "FIGMA_TOKEN"
				s.Headers = map[string]string{"X-Figma-Region": "us-east-1", "X-Org-Id": ""}
			}),
			with(stdio("codex-off", h(".codex/config.toml"), "off"), func(s *Server) { s.Enabled = false }),
		}, []string{
			h(".codex/config.toml") + `: mcp_servers.codex-figma.headers.X-Org-Id: environment variable FIGMA_ORG is not set; using ""`,
		}},
		{ImportWindsurf, []*Server{
			with(remote("windsurf-remote", h(".codeium/windsurf/mcp_config.json"), "https://ws.example.com/mcp"), func(s *Server) {
				s.ExcludeTools = []string{"dangerous"}
				s.PolicyNotes = []string{`disabledTools ["dangerous"] → excludeTools`}
			}),
			with(stdio("windsurf-off", h(".codeium/windsurf/mcp_config.json"), "wsx"), func(s *Server) {
				s.Enabled = false
				s.AutoApprove = []string{"a"}
				s.PolicyNotes = []string{`alwaysAllow ["a"] → autoApprove (never asked)`}
			}),
			stdio("windsurf-old", h(".windsurf/mcp.json"), "old-windsurf"),
		}, nil},
		{ImportVSCode, []*Server{
			stdio("vscode-py", h(".config/Code/User/mcp.json"), "python", "-m", "server"),
			remote("vscode-sse", h(".config/Code/User/mcp.json"), "http://localhost:3001/sse"),
		}, []string{
			h(".config/Code/User/mcp.json") + ": servers.vscode-prompt: uses ${input:api-key}, which only VS Code can prompt for; server skipped",
			h(".config/Code/User/mcp.json") + ": servers.vscode-py.envFile: not supported by mcpgw; ignored (set env instead)",
		}},
		{ImportOpenCode, []*Server{
			with(stdio("oc-local", h(".config/opencode/opencode.json"), "npx", "-y", "@oc/mcp"), func(s *Server) {
				s.Env = map[string]string{"X": "y"}
			}),
			with(remote("oc-remote", h(".config/opencode/opencode.json"), "https://oc.example.com/mcp"), func(s *Server) { s.Auth = AuthNone }),
		}, []string{
			h(".config/opencode/opencode.json") + `: mcp.oc-ws: type "websocket" is not supported by mcpgw; server skipped`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			file := writeFile(t, t.TempDir(), "mcp.json", `{"imports": ["`+tt.kind+`"]}`)
			cfg, err := Load(file, importOptions(t, importEnv))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]*Server{}
			for _, s := range tt.want {
				want[s.Name] = s
			}
			for name, s := range cfg.Servers {
				if s.Hash == "" {
					t.Errorf("server %q has no identity hash", name)
				}
			}
			compareServers(t, cfg.Servers, want)
			if !slices.Equal(cfg.Warnings, tt.warns) {
				t.Errorf("warnings:\n got: %q\nwant: %q", cfg.Warnings, tt.warns)
			}
			var wantFiles []string
			wantFiles = append(wantFiles, file)
			for _, c := range importCandidates(tt.kind, importOptions(t, nil)) {
				wantFiles = append(wantFiles, c.path)
			}
			if !slices.Equal(cfg.Files, wantFiles) {
				t.Errorf("Files = %q, want %q", cfg.Files, wantFiles)
			}
		})
	}
}

// TestImportPrecedence: mcpgw's own servers win, then the imports in the
// order listed, and within one import its files in order. Servers that
// point back at mcpgw are skipped with a warning.
func TestImportPrecedence(t *testing.T) {
	home := importHome(t)
	file := absTestdata(t, "imports/mcp.json")
	cfg, err := Load(file, importOptions(t, importEnv))
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]string{}
	for name, s := range cfg.Servers {
		sources[name] = strings.TrimPrefix(strings.TrimPrefix(s.Source, home+"/"), filepath.Dir(file)+"/")
	}
	want := map[string]string{
		"shared":          "mcp.json", // also in Pi's and Cursor's files
		"pi-fs":           ".pi/agent/mcp.json",
		"pi-time":         ".pi/agent/mcp.json",
		"pi-remote":       ".pi/agent/mcp.json",
		"pi-local":        ".pi/agent/settings.json",
		"pi-web":          ".pi/agent/settings.json",
		"pi-plain":        ".pi/agent/settings.json",
		"cursor-github":   ".cursor/mcp.json",
		"cursor-tool":     ".cursor/mcp.json",
		"claude-first":    ".claude/mcp.json",
		"claude-user":     ".claude/mcp.json", // also in ~/.claude.json
		"claude-sse":      ".claude.json",
		"desktop-memory":  ".config/Claude/claude_desktop_config.json",
		"codex-docs":      ".codex/config.toml",
		"codex-figma":     ".codex/config.toml",
		"codex-off":       ".codex/config.toml",
		"windsurf-remote": ".codeium/windsurf/mcp_config.json", // also in ~/.windsurf/mcp.json
		"windsurf-off":    ".codeium/windsurf/mcp_config.json",
		"windsurf-old":    ".windsurf/mcp.json",
		"vscode-py":       ".config/Code/User/mcp.json",
		"vscode-sse":      ".config/Code/User/mcp.json",
		"oc-local":        ".config/opencode/opencode.json",
		"oc-remote":       ".config/opencode/opencode.json",
	}
	if runtime.GOOS != "linux" {
		delete(want, "desktop-memory")
		delete(want, "vscode-py")
		delete(want, "vscode-sse")
	}
	if !reflect.DeepEqual(sources, want) {
		for _, n := range slices.Sorted(maps.Keys(want)) {
			if sources[n] != want[n] {
				t.Errorf("%s: source %q, want %q", n, sources[n], want[n])
			}
		}
		for n := range sources {
			if _, ok := want[n]; !ok {
				t.Errorf("unexpected server %s from %s", n, sources[n])
			}
		}
	}
	if got := cfg.Servers["shared"].Command; got != "from-mcpgw" {
		t.Errorf("shared.command = %q, want from-mcpgw", got)
	}
	wantWarns := []string{
		`mcpServers.itself: points at mcpgw's own address 127.0.0.1:7332; skipped`,
		`mcpServers.shim: runs mcpgw's stdio shim, which connects back to mcpgw itself; skipped`,
	}
	if !slices.Equal(cfg.Warnings[:2], wantWarns) {
		t.Errorf("first warnings = %q, want %q", cfg.Warnings[:2], wantWarns)
	}
}

func TestPointsAtSelf(t *testing.T) {
	cfgPath := "/home/u/.config/mcpgw/mcp.json"
	tests := []struct {
		name   string
		srv    Server
		listen string
		want   bool
	}{
		{"shim", Server{Command: "mcpgw", Args: []string{"stdio"}}, "", true},
		{"shim full path", Server{Command: "/home/u/go/bin/mcpgw", Args: []string{"stdio", "--mode", "toolsearch"}}, "", true},
		{"shim exe", Server{Command: `mcpgw.exe`, Args: []string{"stdio"}}, "", true},
		{"other subcommand", Server{Command: "mcpgw", Args: []string{"testserver"}}, "", false},
		{"no args", Server{Command: "mcpgw"}, "", false},
		{"other program", Server{Command: "mcpgw-helper", Args: []string{"stdio"}}, "", false},
		{"serve stdio same config", Server{Command: "mcpgw", Args: []string{"serve", "--stdio"}}, "", true},
		{"serve stdio explicit same config", Server{Command: "mcpgw", Args: []string{"serve", "--config", "~/.config/mcpgw/mcp.json", "-stdio"}}, "", true},
		{"serve stdio other config", Server{Command: "mcpgw", Args: []string{"serve", "--stdio", "--config=/etc/other.json"}}, "", false},
		{"serve daemon", Server{Command: "mcpgw", Args: []string{"serve"}}, "", false},
		{"own url", Server{URL: "http://127.0.0.1:7332/mcp"}, "127.0.0.1:7332", true},
		{"localhost", Server{URL: "http://localhost:7332/mcp"}, "127.0.0.1:7332", true},
		{"ipv6 loopback", Server{URL: "http://[::1]:7332/mcp"}, "127.0.0.1:7332", true},
		{"all interfaces", Server{URL: "http://127.0.0.1:7332/mcp"}, "0.0.0.0:7332", true},
		{"other port", Server{URL: "http://127.0.0.1:7333/mcp"}, "127.0.0.1:7332", false},
		{"default port", Server{URL: "http://localhost/mcp"}, "127.0.0.1:80", true},
		{"remote host", Server{URL: "https://example.com:7332/mcp"}, "127.0.0.1:7332", false},
		{"no listen", Server{URL: "http://127.0.0.1:7332/mcp"}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := &LoadOptions{Home: "/home/u", Listen: tt.listen}
			if got := pointsAtSelf(&tt.srv, opts, cfgPath) != ""; got != tt.want {
				t.Errorf("pointsAtSelf(%+v, listen %q) = %v, want %v", tt.srv, tt.listen, got, tt.want)
			}
		})
	}
}

// TestImportErrors: a broken or invalid import file fails the load like
// mcpgw's own file does, naming the file and the field; with SkipBroken,
// it is skipped (Skipped, a warning, still watched) and the rest loads,
// but mcpgw's own file is never skipped.
func TestImportErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // relative to home
		imp   string
		want  string // HOME stands for the home directory
	}{
		{"unknown kind", nil, "curser",
			`CONFIG: imports[0]: "curser" is not one of pi, cursor, claude-code, claude-desktop, codex, windsurf, vscode, opencode (did you mean "cursor"?)`},
		{"half-saved json", map[string]string{".cursor/mcp.json": "{\"mcpServers\": {\"a\": {\"command\": \"x\"},\n"}, "cursor",
			`HOME/.cursor/mcp.json:2:1: unexpected end of file`},
		{"invalid server", map[string]string{".cursor/mcp.json": `{"mcpServers": {"a": {"command": "x", "url": "http://y"}}}`}, "cursor",
			`HOME/.cursor/mcp.json: mcpServers.a.url: cannot be combined with command; set exactly one of command and url`},
		{"servers not an object", map[string]string{".claude.json": `{"mcpServers": []}`}, "claude-code",
			`HOME/.claude.json: mcpServers: must be an object, got array`},
		{"toml syntax", map[string]string{".codex/config.toml": "[mcp_servers.a]\ncommand = \n"}, "codex",
			`HOME/.codex/config.toml:2:11: expected value but found '\n' instead`},
		{"codex timeout type", map[string]string{".codex/config.toml": "[mcp_servers.a]\ncommand = \"x\"\nstartup_timeout_sec = \"soon\"\n"}, "codex",
			`HOME/.codex/config.toml: mcp_servers.a.startupTimeoutMs: must be a number of milliseconds, got string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			for name, data := range tt.files {
				writeFile(t, home, name, data)
			}
			config := writeFile(t, t.TempDir(), "mcp.json", `{"mcpServers": {"mine": {"command": "m"}}, "imports": ["`+tt.imp+`"]}`)
			cfg, err := Load(config, &LoadOptions{Home: home, Getenv: func(string) string { return "" }})
			if err == nil {
				t.Fatalf("no error; servers %v", cfg.Servers)
			}
			want := strings.NewReplacer("HOME", home, "CONFIG", config).Replace(tt.want)
			if err.Error() != want {
				t.Errorf("error:\n got: %s\nwant: %s", err, want)
			}

			var asked []string
			cfg, err = Load(config, &LoadOptions{Home: home, Getenv: func(string) string { return "" },
				SkipBroken: func(path string) bool { asked = append(asked, path); return true }})
			if tt.files == nil { // mcpgw's own file
				if err == nil || err.Error() != want || len(asked) > 0 {
					t.Errorf("own file with SkipBroken: %v (asked about %v), want %s", err, asked, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("with SkipBroken: %v", err)
			}
			if len(cfg.Skipped) != 1 || cfg.Skipped[0].Err.Error() != want || !slices.Equal(asked, []string{cfg.Skipped[0].Path}) {
				t.Fatalf("Skipped = %v (asked about %v), want one file: %s", cfg.Skipped, asked, want)
			}
			path := cfg.Skipped[0].Path
			if _, ok := cfg.Servers["mine"]; !ok || len(cfg.Servers) != 1 {
				t.Errorf("servers with %s skipped: %v, want mine", path, cfg.Servers)
			}
			if !slices.Contains(cfg.Files, path) || !slices.Contains(cfg.Warnings, want+"; skipped: its servers are left out until it is fixed") {
				t.Errorf("skipped %s: Files %v, Warnings %q", path, cfg.Files, cfg.Warnings)
			}
		})
	}
}

// TestImportVariables: other tools' variable syntaxes are resolved.
func TestImportVariables(t *testing.T) {
	home := t.TempDir()
	writeFile(t, home, ".claude.json", `{"mcpServers": {
		"a": {"command": "${userHome}/bin/a", "args": ["${TOKEN:-none}", "${UNSET:-fallback}", "${env:TOKEN}", "x${pathSeparator}y"],
		      "env": {"K": "${env:TOKEN}", "L": "$env:TOKEN", "M": "{env:TOKEN}"}}
	}}`)
	config := writeFile(t, t.TempDir(), "mcp.json", `{"imports": ["claude-code"]}`)
	cfg, err := Load(config, &LoadOptions{Home: home, Getenv: func(k string) string { return map[string]string{"TOKEN": "t0k"}[k] }})
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Servers["a"]
	if want := filepath.Join(home, "bin/a"); s.Command != want {
		t.Errorf("command = %q, want %q", s.Command, want)
	}
	if want := []string{"t0k", "fallback", "t0k", "x/y"}; !slices.Equal(s.Args, want) {
		t.Errorf("args = %q, want %q", s.Args, want)
	}
	if want := map[string]string{"K": "t0k", "L": "t0k", "M": "t0k"}; !maps.Equal(s.Env, want) {
		t.Errorf("env = %q, want %q", s.Env, want)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings: %q", cfg.Warnings)
	}
}

// TestImportHash: Hash changes with the server definitions of an imported
// file and with nothing else in it, and with a file appearing.
func TestImportHash(t *testing.T) {
	home := t.TempDir()
	config := writeFile(t, t.TempDir(), "mcp.json", `{"imports": ["claude-code", "cursor"]}`)
	opts := &LoadOptions{Home: home, Getenv: func(string) string { return "" }}
	load := func() string {
		t.Helper()
		cfg, err := Load(config, opts)
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Hash
	}
	h0 := load()
	writeFile(t, home, ".claude.json", `{"numStartups": 1, "mcpServers": {"a": {"command": "x"}}}`)
	h1 := load()
	writeFile(t, home, ".claude.json", `{"numStartups": 2, "tips": {"y": 1},  "mcpServers": {"a": {"command": "x"}}}`)
	h2 := load()
	writeFile(t, home, ".claude.json", `{"numStartups": 2, "mcpServers": {"a": {"command": "x", "args": ["1"]}}}`)
	h3 := load()
	writeFile(t, home, ".cursor/mcp.json", `{}`)
	h4 := load()
	if h0 == h1 || h1 != h2 || h2 == h3 || h3 == h4 {
		t.Errorf("hashes: none %.8s, first %.8s, other fields changed %.8s (want same), server changed %.8s, new file %.8s", h0, h1, h2, h3, h4)
	}
}
