package registry

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// abs returns the absolute path of a testdata file, as Load reports it.
func absTestdata(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoadInvalid loads each testdata/invalid-*.json file and checks the
// exact error. "FILE" stands for the file's absolute path.
func TestLoadInvalid(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"invalid-syntax.json", `FILE:4:5: invalid character '"' after object value (expecting ',' or '}')`},
		{"invalid-eof.json", `FILE:4:1: unexpected end of file`},
		{"invalid-top-level-array.json", `FILE:1:1: top-level value must be an object, got array`},
		{"invalid-servers-array.json", `FILE:1:17: mcpServers: must be an object, got array`},
		{"invalid-server-string.json", `FILE:1:29: mcpServers.github: must be an object, got string`},
		{"invalid-command-and-url.json", `FILE:3:41: mcpServers.github.url: cannot be combined with command; set exactly one of command and url`},
		{"invalid-no-transport.json", `FILE:1:19: mcpServers.github: needs command or url`},
		{"invalid-command-empty.json", `FILE:1:42: mcpServers.github.command: must not be empty`},
		{"invalid-url-parse.json", `FILE:1:38: mcpServers.github.url: parse "ht!tp://x": invalid URL scheme`},
		{"invalid-url-scheme.json", `FILE:1:38: mcpServers.github.url: "ftp://example.com/mcp": scheme "ftp" is not http or https`},
		{"invalid-url-no-scheme.json", `FILE:1:38: mcpServers.github.url: "example.com/mcp" has no scheme; want http:// or https://`},
		{"invalid-url-no-host.json", `FILE:1:38: mcpServers.github.url: "https:///mcp" has no host`},
		{"invalid-url-unset-var.json", `FILE:1:38: mcpServers.github.url: environment variables GH_HOST, GH_KEY are not set`},
		{"invalid-url-own-var.json", `FILE:1:38: mcpServers.github.url: MCPGW_TOKEN is mcpgw's own variable, never given to an upstream`},
		{"invalid-lifecycle.json", `FILE:1:61: mcpServers.github.lifecycle: "lazzy" is not one of lazy, eager, keep-alive, lazy-keep-alive`},
		{"invalid-server-tool-prefix.json", `FILE:1:62: mcpServers.github.toolPrefix: "full" is not one of server, short, none, mcp`},
		{"invalid-settings-tool-prefix.json", `FILE:1:31: settings.toolPrefix: "long" is not one of server, short, none, mcp`},
		{"invalid-settings-mode.json", `FILE:1:25: settings.mode: "search" is not one of proxy, toolsearch, direct`},
		{"invalid-settings-object.json", `FILE:1:15: settings: must be an object, got array`},
		{"invalid-idle-negative.json", `FILE:1:63: mcpServers.github.idleTimeout: must not be negative, got -5`},
		{"invalid-timeout-string.json", `FILE:1:68: mcpServers.github.requestTimeoutMs: must be a number of milliseconds, got string`},
		{"invalid-timeout-huge.json", `FILE:1:37: settings.startupTimeoutMs: 1e300 is too large`},
		{"invalid-args-string.json", `FILE:1:56: mcpServers.github.args: must be an array of strings, got string`},
		{"invalid-args-element.json", "FILE:1:64: mcpServers.github.args[1]: must be a string, got number 3; quote it: \"3\"\nFILE:1:67: mcpServers.github.args[2]: must be a string, got boolean true; quote it: \"true\""},
		{"invalid-env-number.json", `FILE:1:65: mcpServers.db.env.PORT: must be a string, got number 5432; quote it: "5432"`},
		{"invalid-headers-array.json", `FILE:1:73: mcpServers.api.headers: must be an object of strings, got array`},
		{"invalid-glob.json", `FILE:1:74: mcpServers.github.includeTools[1]: "list_[a-": syntax error in pattern`},
		{"invalid-empty-name.json", `FILE:1:19: mcpServers."": name must not be empty`},
		{"invalid-auth.json", `FILE:1:70: mcpServers.api.auth: "basic" is not one of "oauth", "bearer", false`},
		{"invalid-auth-true.json", `FILE:1:70: mcpServers.api.auth: must be "oauth", "bearer" or false, got boolean`},
		{"invalid-enabled-string.json", `FILE:1:59: mcpServers.github.enabled: must be true or false, got string`},
		{"invalid-imports.json", `FILE:1:14: imports: must be an array of strings, got string`},
		{"invalid-direct-tools.json", `FILE:1:63: mcpServers.github.directTools: must be true, false or an array of tool names, got number`},
		{"invalid-odd-name.json", `FILE:1:63: mcpServers."my.server".lifecycle: "sometimes" is not one of lazy, eager, keep-alive, lazy-keep-alive`},
		{"invalid-team-issuer-http.json", `FILE:1:23: team.issuer: "http://login.example.com": an issuer must be https (plain http only on a loopback host)`},
		{"invalid-team-no-audience.json", `FILE:1:11: team.audience: is required: the audience a token must be issued for`},
		{"invalid-several.json", "FILE:3:32: settings.idleTimeout: must be a number of minutes, got string\nFILE:5:41: mcpServers.a.lifecycle: \"eagre\" is not one of lazy, eager, keep-alive, lazy-keep-alive\nFILE:6:19: mcpServers.b.url: \"http://\" has no host"},
	}
	files, err := filepath.Glob("testdata/invalid-*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(tests) {
		t.Errorf("%d invalid-*.json files, %d test cases", len(files), len(tests))
	}
	noEnv := testOptions(nil)
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			file := absTestdata(t, tt.file)
			cfg, err := Load(file, noEnv)
			if err == nil {
				t.Fatalf("Load succeeded: %d servers, warnings %q", len(cfg.Servers), cfg.Warnings)
			}
			if cfg != nil {
				t.Errorf("Load returned a Config with its error")
			}
			want := strings.ReplaceAll(tt.want, "FILE", file)
			if err.Error() != want {
				t.Errorf("error:\n got: %s\nwant: %s", err, want)
			}
		})
	}
}

func TestValidationErrorFields(t *testing.T) {
	_, err := Load("testdata/invalid-lifecycle.json", testOptions(nil))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v (%T) does not wrap a *ValidationError", err, err)
	}
	if ve.Field != "mcpServers.github.lifecycle" || ve.Value != "lazzy" {
		t.Errorf("Field, Value = %q, %q; want mcpServers.github.lifecycle, lazzy", ve.Field, ve.Value)
	}

	// Several problems: each one is reachable.
	_, err = Load("testdata/invalid-several.json", testOptions(nil))
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error %T is not a joined error", err)
	}
	var fields []string
	for _, e := range joined.Unwrap() {
		if errors.As(e, &ve) {
			fields = append(fields, ve.Field)
		}
	}
	want := []string{"settings.idleTimeout", "mcpServers.a.lifecycle", "mcpServers.b.url"}
	if !reflect.DeepEqual(fields, want) {
		t.Errorf("fields = %q, want %q", fields, want)
	}

	// Secrets never appear in Value.
	_, err = Load("testdata/invalid-env-number.json", testOptions(nil))
	if !errors.As(err, &ve) || ve.Value != "" {
		t.Errorf("env error Value = %q, want empty", ve.Value)
	}
}

func boolPtr(b bool) *bool { return &b }

// clearHashes zeroes Server.Hash and Server.Line, checked separately, so
// that servers can be compared whole.
func clearHashes(servers map[string]*Server) {
	for _, s := range servers {
		if s.Hash == "" || len(s.Hash) != 64 {
			panic("server " + s.Name + " has no identity hash")
		}
		s.Hash, s.Line = "", 0
	}
}

func compareServers(t *testing.T, got, want map[string]*Server) {
	t.Helper()
	clearHashes(got)
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("server %q missing", name)
			continue
		}
		// SecretCommands depends on the source; TestSecretCommandsBySource
		// covers it.
		gc := *g
		gc.SecretCommands = w.SecretCommands
		if !reflect.DeepEqual(&gc, w) {
			t.Errorf("server %q:\n got: %+v\nwant: %+v", name, gc, *w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("unexpected server %q", name)
		}
	}
}

func TestLoadJSONC(t *testing.T) {
	file := absTestdata(t, "valid-jsonc.json")
	cfg, err := Load(file, testOptions(testEnv))
	if err != nil {
		t.Fatal(err)
	}
	wantSettings := Settings{
		ToolPrefix:     PrefixShort,
		IdleTimeout:    5 * time.Minute,
		CachePath:      "/home/u/cache/mcp-cache.json",
		CacheMaxAge:    time.Hour,
		Mode:           ModeToolSearch,
		RequestTimeout: 2 * time.Minute,
		StartupTimeout: 30 * time.Second,
		DirectTools:    []string{"github/search_code"},

		DiscoveryTimeout:   2500 * time.Millisecond,
		SessionIdleTimeout: 30 * time.Minute,
	}
	if !reflect.DeepEqual(cfg.Settings, wantSettings) {
		t.Errorf("Settings:\n got: %+v\nwant: %+v", cfg.Settings, wantSettings)
	}
	if want := []string{"cursor", "claude-code"}; !reflect.DeepEqual(cfg.Imports, want) {
		t.Errorf("Imports = %q, want %q", cfg.Imports, want)
	}
	wantFiles := []string{file, // then the files of its imports (none exist under /home/u)
		"/home/u/.cursor/mcp.json", "/home/u/.claude/mcp.json", "/home/u/.claude.json", "/home/u/.claude/claude_desktop_config.json"}
	if cfg.Path != file || cfg.Missing || !reflect.DeepEqual(cfg.Files, wantFiles) {
		t.Errorf("Path, Missing, Files = %q, %v, %q", cfg.Path, cfg.Missing, cfg.Files)
	}
	if cfg.Warnings != nil {
		t.Errorf("Warnings = %q, want none", cfg.Warnings)
	}
	compareServers(t, cfg.Servers, withSettingsTimeouts(wantSettings, map[string]*Server{
		"github": {
			Name:            "github",
			URL:             "https://api.githubcopilot.com/mcp",
			Auth:            AuthOAuth,
			ExposeResources: boolPtr(false),
			IncludeTools:    []string{"get_*", "search_*"},
			ExcludeTools:    []string{"delete_*"},
			Enabled:         true,
			Lifecycle:       LifecycleKeepAlive,
			IdleTimeout:     0, // keep-alive servers are never closed for idleness
			ToolPrefix:      PrefixServer,
			Description:     "GitHub issues, pull requests and code search",
			DirectTools:     []string{"search_code"},
			Source:          file,
		},
		"chrome-devtools": {
			Name:           "chrome-devtools",
			Command:        "npx",
			Args:           []string{"-y", "chrome-devtools-mcp@1.6.0"},
			Enabled:        true,
			Lifecycle:      LifecycleEager,
			IdleTimeout:    0, // eager: no idle close unless configured
			RequestTimeout: 5 * time.Second,
			DirectTools:    []string{"*"},
			Source:         file,
		},
		"fs": {
			Name:        "fs",
			Command:     "fs-mcp",
			Enabled:     false,
			Lifecycle:   LifecycleLazy, // lazy-keep-alive: lazy, never idle-closed
			IdleTimeout: 0,
			Source:      file,
		},
		"old": {
			Name:        "old",
			Command:     "old-mcp",
			Enabled:     false, // "disabled": true, pi-mcp-adapter's spelling
			Lifecycle:   LifecycleLazy,
			IdleTimeout: 0,
			Source:      file,
		},
		"slow": {
			Name:           "slow",
			Command:        "slow-mcp",
			Enabled:        true,
			Lifecycle:      LifecycleLazy,
			IdleTimeout:    150 * time.Second,
			StartupTimeout: 90 * time.Second,
			DirectTools:    []string{}, // explicitly none, unlike nil (inherit)
			Source:         file,
		},
	}))
}

// withSettingsTimeouts gives servers without their own timeouts the
// settings' ones, as Load does.
func withSettingsTimeouts(st Settings, servers map[string]*Server) map[string]*Server {
	for _, s := range servers {
		if s.RequestTimeout == 0 {
			s.RequestTimeout = st.RequestTimeout
		}
		if s.StartupTimeout == 0 {
			s.StartupTimeout = st.StartupTimeout
		}
	}
	return servers
}

func TestLoadDefaults(t *testing.T) {
	file := absTestdata(t, "valid-minimal.json")
	cfg, err := Load(file, testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{
		ToolPrefix:  PrefixServer,
		IdleTimeout: 10 * time.Minute,
		CacheMaxAge: 7 * 24 * time.Hour,
		Mode:        ModeProxy,

		DiscoveryTimeout:   10 * time.Second,
		SessionIdleTimeout: time.Hour,
	}
	if !reflect.DeepEqual(cfg.Settings, want) {
		t.Errorf("Settings:\n got: %+v\nwant: %+v", cfg.Settings, want)
	}
	compareServers(t, cfg.Servers, map[string]*Server{
		"echo": {
			Name:        "echo",
			Command:     "echo-mcp",
			Enabled:     true,
			Lifecycle:   LifecycleLazy,
			IdleTimeout: 10 * time.Minute,
			Source:      file,
		},
	})
}

func TestLoadAltServersKey(t *testing.T) {
	file := absTestdata(t, "valid-alt-key.json")
	cfg, err := Load(file, testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	compareServers(t, cfg.Servers, map[string]*Server{
		"context7": {
			Name:        "context7",
			URL:         "https://mcp.context7.com/mcp",
			Enabled:     true,
			Lifecycle:   LifecycleLazy,
			IdleTimeout: 10 * time.Minute,
			Source:      file,
		},
	})
}

func TestLoadInterpolation(t *testing.T) {
	env := map[string]string{
		"TOKEN": "s3cret",
		"HOST":  "example.com",
		"CHAIN": "$env:TOKEN", // expanded again by the later passes, as in the adapter
		"BANG":  "!notacommand",
	}
	file := absTestdata(t, "valid-interpolation.json")
	cfg, err := Load(file, testOptions(env))
	if err != nil {
		t.Fatal(err)
	}
	compareServers(t, cfg.Servers, map[string]*Server{
		"stdio": {
			Name:    "stdio",
			Command: "~/bin/tool",
			Args: []string{
				"--token=s3cret",
				"example.com",
				"example.com:8080",
				"",              // unset
				"$HOST",         // not a syntax
				"${NOT-A-NAME}", // not a name
				"$s3cret",
				"s3cret",
			},
			Env: map[string]string{
				"A": "s3cret",
				"B": "!!bang-s3cret",    // escaped "!": interpolated, escape kept
				"C": "!pass show token", // a command: left for the upstream
				"D": "",
			},
			Cwd:         "/home/u/work/example.com",
			Enabled:     true,
			Lifecycle:   LifecycleLazy,
			IdleTimeout: 10 * time.Minute,
			Source:      file,
		},
		"remote": {
			Name:           "remote",
			URL:            "https://example.com/mcp?token=s3cret",
			Headers:        map[string]string{"Authorization": "Bearer s3cret", "X-Empty": ""},
			Auth:           AuthBearer,
			BearerTokenEnv: "TOKEN",
			Enabled:        true,
			Lifecycle:      LifecycleLazy,
			IdleTimeout:    10 * time.Minute,
			Source:         file,
		},
		"relative": {
			Name:        "relative",
			Command:     "x",
			Cwd:         filepath.Join(filepath.Dir(file), "sub", "dir"),
			Enabled:     true,
			Lifecycle:   LifecycleLazy,
			IdleTimeout: 10 * time.Minute,
			Source:      file,
		},
		"home": {
			Name:        "home",
			Command:     "x",
			Cwd:         "/home/u",
			Enabled:     true,
			Lifecycle:   LifecycleLazy,
			IdleTimeout: 10 * time.Minute,
			Source:      file,
		},
		"bang": {
			Name:           "bang",
			URL:            "https://example.com/mcp",
			BearerTokenEnv: "BANG",
			Enabled:        true,
			Lifecycle:      LifecycleLazy,
			IdleTimeout:    10 * time.Minute,
			Source:         file,
		},
	})
	wantWarnings := []string{
		`mcpServers.stdio.args[3]: environment variable UNSET is not set; using ""`,
		`mcpServers.stdio.env.D: environment variable UNSET is not set; using ""`,
		`mcpServers.remote.headers.X-Empty: environment variable UNSET is not set; using ""`,
	}
	if !reflect.DeepEqual(cfg.Warnings, wantWarnings) {
		t.Errorf("Warnings:\n got: %q\nwant: %q", cfg.Warnings, wantWarnings)
	}
}

func TestLoadWarnings(t *testing.T) {
	cfg, err := Load("testdata/valid-warnings.json", testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`claudePlugins: not supported by mcpgw; ignored`,
		`mcpServrs: unknown field (did you mean "mcpServers"?)`,
		`mcp-servers: ignored because mcpServers is also set`,
		`settings.showStatusIcon: not supported by mcpgw; ignored`,
		`settings.idleTimout: unknown field (did you mean "idleTimeout"?)`,
		`mcpServers.github.comand: unknown field (did you mean "command"?)`,
		`mcpServers.github.Args: unknown field (did you mean "args"?)`,
		`mcpServers.github.oauth: only used with url; ignored`,
		`mcpServers.github.headers: only used with url; ignored`,
		`mcpServers.github.idleTimeout: ignored for keep-alive servers`,
		`mcpServers.remote.env: only used with command; ignored`,
		`mcpServers.remote.bearerTokenEnv: environment variable MISSING_TOKEN is not set`,
		`mcpServers.remote.directTools: "search" is not supported by mcpgw; ignored`,
		`mcpServers.mux.socket: socket servers are not supported by mcpgw; server skipped`,
		`mcpServers."my server": name has characters outside [A-Za-z0-9_-]; its tools are prefixed "my_20_server"`,
		`mcpServers.dup: given more than once; the last one is used`,
	}
	if !reflect.DeepEqual(cfg.Warnings, want) {
		t.Errorf("Warnings:\n got: %q\nwant: %q", cfg.Warnings, want)
	}
	var names []string
	for name := range cfg.Servers {
		names = append(names, name)
	}
	if len(names) != 4 || cfg.Servers["dup"] == nil || cfg.Servers["dup"].Command != "second" || cfg.Servers["mux"] != nil || cfg.Servers["ignored"] != nil {
		t.Errorf("servers = %q (dup must be the second definition; mux and ignored absent)", names)
	}
}

func TestLoadMissing(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mcp.json")
	cfg, err := Load(file, testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Missing || cfg.Path != file || len(cfg.Servers) != 0 || cfg.Servers == nil || !reflect.DeepEqual(cfg.Files, []string{file}) {
		t.Errorf("got Missing=%v Path=%q Servers=%v Files=%q", cfg.Missing, cfg.Path, cfg.Servers, cfg.Files)
	}
	if cfg.Settings.IdleTimeout != DefaultIdleTimeout || cfg.Settings.Mode != ModeProxy {
		t.Errorf("defaults not applied: %+v", cfg.Settings)
	}

	// An empty file is not a missing one: the hash tells them apart, so a
	// reload notices the file appearing.
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	empty, err := Load(file, testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	if empty.Missing || empty.Hash == cfg.Hash {
		t.Errorf("empty file: Missing=%v, Hash equal to missing file's: %v", empty.Missing, empty.Hash == cfg.Hash)
	}
}

func TestLoadCommentsOnly(t *testing.T) {
	cfg, err := Load("testdata/valid-empty.json", testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Missing || len(cfg.Servers) != 0 || cfg.Warnings != nil {
		t.Errorf("got Missing=%v Servers=%v Warnings=%q", cfg.Missing, cfg.Servers, cfg.Warnings)
	}
}

func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(dir, testOptions(nil))
	want := "reading config: read " + dir + ": is a directory"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

func TestConfigHash(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mcp.json")
	load := func(content string) string {
		t.Helper()
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(file, testOptions(nil))
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Hash
	}
	a := load(`{"mcpServers": {"a": {"command": "a"}}}`)
	if len(a) != 64 {
		t.Fatalf("Hash %q is not a sha256 hex", a)
	}
	if b := load(`{"mcpServers": {"a": {"command": "a"}}}`); b != a {
		t.Errorf("same content, different hash")
	}
	// Any byte counts, comments included: a reload of an edited file is
	// never skipped.
	if b := load(`{"mcpServers": {"a": {"command": "a"}}} // note`); b == a {
		t.Errorf("different content, same hash")
	}
	// Parse hashes the same bytes the same way.
	cfg, err := Parse([]byte(`{"mcpServers": {"a": {"command": "a"}}}`), file, testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Hash != a {
		t.Errorf("Parse hash %s != Load hash %s", cfg.Hash, a)
	}
}

func TestParse(t *testing.T) {
	cfg, err := Parse([]byte("\ufeff{\"mcpServers\": {\"a\": {\"url\": \"http://127.0.0.1:8080/mcp\"}}}"), "inline.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Servers["a"]
	if s == nil || s.URL != "http://127.0.0.1:8080/mcp" || s.Source != "inline.json" || cfg.Path != "inline.json" {
		t.Errorf("got %+v", s)
	}
	_, err = Parse([]byte(`{"mcpServers": {"a": {"url": 1}}}`), "inline.json", nil)
	if want := "inline.json:1:30: mcpServers.a.url: must be a string, got number 1; quote it: \"1\""; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

func TestDefaultConfigPath(t *testing.T) {
	tests := []struct {
		xdg, want string
	}{
		{"/xdg", "/xdg/mcpgw/mcp.json"},
		{"", "/home/u/.config/mcpgw/mcp.json"},
		{"relative/dir", "/home/u/.config/mcpgw/mcp.json"}, // the XDG spec says ignore it
	}
	for _, tt := range tests {
		got := defaultConfigPath(testOptions(map[string]string{"XDG_CONFIG_HOME": tt.xdg}))
		if got != tt.want {
			t.Errorf("XDG_CONFIG_HOME=%q: %s, want %s", tt.xdg, got, tt.want)
		}
	}
	t.Setenv("XDG_CONFIG_HOME", "/somewhere")
	if got := DefaultConfigPath(); got != "/somewhere/mcpgw/mcp.json" {
		t.Errorf("DefaultConfigPath() = %s", got)
	}
}

func TestLoadDefaultPath(t *testing.T) {
	xdg := t.TempDir()
	file := filepath.Join(xdg, "mcpgw", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(`{"mcpServers": {"x": {"command": "x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load("", testOptions(map[string]string{"XDG_CONFIG_HOME": xdg}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Path != file || cfg.Servers["x"] == nil {
		t.Errorf("Path = %s, servers %v", cfg.Path, cfg.Servers)
	}
}

func TestSettingsTimeoutsApplyToServers(t *testing.T) {
	cfg, err := Parse([]byte(`{"settings": {"requestTimeoutMs": 5000, "startupTimeoutMs": 7000},
		"mcpServers": {"a": {"command": "x"}, "b": {"command": "y", "requestTimeoutMs": 100}}}`), "/cfg/mcp.json", &LoadOptions{Home: "/home/u", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	a, b := cfg.Servers["a"], cfg.Servers["b"]
	if a.RequestTimeout != 5*time.Second || a.StartupTimeout != 7*time.Second {
		t.Errorf("a: request %v, startup %v; want the settings' 5s, 7s", a.RequestTimeout, a.StartupTimeout)
	}
	if b.RequestTimeout != 100*time.Millisecond || b.StartupTimeout != 7*time.Second {
		t.Errorf("b: request %v, startup %v; want its own 100ms and the settings' 7s", b.RequestTimeout, b.StartupTimeout)
	}
}

func TestSettingsMaxOutputBytes(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
	}{{`{}`, 0}, {`{"maxOutputBytes": 1000}`, 1000}, {`{"maxOutputBytes": 0}`, -1}} {
		cfg, err := Parse([]byte(`{"settings": `+tt.in+`}`), "/cfg/mcp.json", &LoadOptions{Home: "/home/u", Getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Settings.MaxOutputBytes != tt.want {
			t.Errorf("settings %s: MaxOutputBytes = %d, want %d", tt.in, cfg.Settings.MaxOutputBytes, tt.want)
		}
	}
	_, err := Parse([]byte(`{"settings": {"maxOutputBytes": "lots"}}`), "/cfg/mcp.json", &LoadOptions{Home: "/home/u", Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), "settings.maxOutputBytes: must be a number of bytes") {
		t.Errorf("bad maxOutputBytes: %v", err)
	}
}

// TestIsolation reads "isolation": "session" and refuses other values,
// naming the field.
func TestIsolation(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "mcp.json", `{"mcpServers": {
		"a": {"command": "x", "isolation": "session"},
		"b": {"command": "y", "isolation": "shared"},
		"c": {"command": "z"}}}`)
	cfg, err := Load(path, testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a": IsolationSession, "b": IsolationShared, "c": ""} {
		if got := cfg.Servers[name].Isolation; got != want {
			t.Errorf("%s: Isolation = %q, want %q", name, got, want)
		}
	}
	path = writeFile(t, dir, "bad.json", `{"mcpServers": {"a": {"command": "x", "isolation": "per-session"}}}`)
	_, err = Load(path, testOptions(nil))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "mcpServers.a.isolation" || ve.Value != "per-session" {
		t.Errorf("bad isolation: err = %v", err)
	}
}

func TestMaxConcurrency(t *testing.T) {
	dir := t.TempDir()
	cfg, err := Load(writeFile(t, dir, "mcp.json", `{"mcpServers": {"a": {"command": "x", "maxConcurrency": 4}, "b": {"command": "y"}}}`), testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := cfg.Servers["a"].MaxConcurrency, cfg.Servers["b"].MaxConcurrency; a != 4 || b != 0 {
		t.Errorf("MaxConcurrency a=%d b=%d, want 4 and 0", a, b)
	}
	for _, bad := range []string{`0`, `1.5`, `-2`, `"8"`} {
		_, err := Load(writeFile(t, dir, "bad.json", `{"mcpServers": {"a": {"command": "x", "maxConcurrency": `+bad+`}}}`), testOptions(nil))
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "mcpServers.a.maxConcurrency" {
			t.Errorf("maxConcurrency %s: err = %v", bad, err)
		}
	}
}

// Each server knows the line of its entry, for the status page.
func TestServerLine(t *testing.T) {
	cfg, err := Parse([]byte("// servers\n{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},\n\n    \"b\": {\n      \"url\": \"https://example.com/mcp\"}}}"), "mem.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := cfg.Servers["a"].Line, cfg.Servers["b"].Line; a != 4 || b != 6 {
		t.Errorf("lines a=%d b=%d, want 4 and 6", a, b)
	}
}
