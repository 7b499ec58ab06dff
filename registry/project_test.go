package registry

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// projectFixture is a home directory, an mcpgw config and a project
// directory with every kind of project file.
type projectFixture struct {
	home, config, proj string
	opts               *LoadOptions
	base               *Config
}

func newProjectFixture(t *testing.T) *projectFixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &projectFixture{home: filepath.Join(root, "home"), proj: filepath.Join(root, "src", "proj")}
	f.config = writeFile(t, f.home, ".config/mcpgw/mcp.json", `{
		"mcpServers": {
			"shared": {"command": "own-shared"},
			"ctx7": {"command": "npx", "args": ["-y", "@upstash/context7-mcp"]},
		},
		"imports": ["claude-code", "vscode", "cursor"],
	}`)
	writeFile(t, f.home, ".cursor/mcp.json", `{"mcpServers": {"cursor-a": {"command": "cursor-a"}, "vs": {"command": "from-cursor-global"}}}`)
	writeFile(t, f.home, ".claude.json", `{"mcpServers": {"claude-a": {"command": "claude-a"}},
		"projects": {"`+f.proj+`": {"mcpServers": {"local": {"type": "stdio", "command": "./local.sh"}}}}}`)
	writeFile(t, f.proj, ".pi/mcp.json", `{"mcpServers": {"shared": {"command": "pi-project-shared"}, "both": {"command": "from-pi-project"}}}`)
	writeFile(t, f.proj, ".mcp.json", `{"mcpServers": {
		"both": {"command": "from-mcp-json"},
		"tool": {"command": "node", "args": ["tools/mcp.js"]},
		"ctx7": {"type": "stdio", "command": "npx", "args": ["-y", "@upstash/context7-mcp"]},
		"web": {"type": "http", "url": "https://example.com/mcp?k=${SECRET}"}
	}}`)
	writeFile(t, f.proj, ".vscode/mcp.json", `{"servers": {"vs": {"type": "stdio", "command": "from-vscode-project", "args": ["${workspaceFolder}"]},
		"vsproj": {"type": "stdio", "command": "from-vscode-project", "args": ["${workspaceFolder}"]}}}`)
	f.opts = &LoadOptions{Home: f.home, Getenv: func(k string) string { return map[string]string{"SECRET": "s3"}[k] },
		TrustFile: filepath.Join(f.home, ".local/state/mcpgw/trust.json")}
	f.base = f.load(t)
	return f
}

func (f *projectFixture) load(t *testing.T) *Config {
	t.Helper()
	cfg, err := Load(f.config, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func (f *projectFixture) trust(t *testing.T, dir string) *TrustStore {
	t.Helper()
	ts, err := LoadTrust(f.opts.TrustFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Add(dir); err != nil {
		t.Fatal(err)
	}
	if err := ts.Save(); err != nil {
		t.Fatal(err)
	}
	return ts
}

func sourcesOf(cfg *Config, strip ...string) map[string]string {
	out := map[string]string{}
	r := strings.NewReplacer(strip...)
	for name, s := range cfg.Servers {
		out[name] = r.Replace(s.Source)
	}
	return out
}

func TestWithProjectTrusted(t *testing.T) {
	f := newProjectFixture(t)
	f.trust(t, filepath.Dir(f.proj)) // a parent: it covers the project
	base := f.load(t)
	cfg, err := base.WithProject(f.proj, base.Trust, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	got := sourcesOf(cfg, f.proj, "PROJ", f.home, "HOME")
	want := map[string]string{
		"shared":   "HOME/.config/mcpgw/mcp.json", // the user's: a project only restricts it
		"both":     "PROJ/.pi/mcp.json",           // the Pi project file wins over .mcp.json
		"tool":     "PROJ/.mcp.json",
		"ctx7":     "HOME/.config/mcpgw/mcp.json",
		"web":      "PROJ/.mcp.json",
		"local":    "HOME/.claude.json",     // claude mcp add, for this directory
		"claude-a": "HOME/.claude.json",     // claude-code is imported first
		"vs":       "HOME/.cursor/mcp.json", // the user's, not the project's .vscode file's
		"vsproj":   "PROJ/.vscode/mcp.json",
		"cursor-a": "HOME/.cursor/mcp.json",
	}
	if !maps.Equal(got, want) {
		t.Errorf("sources:\n got: %v\nwant: %v", got, want)
	}
	for name, s := range cfg.Servers {
		if s.Untrusted || !s.Enabled {
			t.Errorf("%s: Untrusted %v, Enabled %v in a trusted project", name, s.Untrusted, s.Enabled)
		}
	}
	// "!cmd" secrets run for servers of the user's own files, Pi's and
	// trusted project files (.pi/mcp.json, .mcp.json), never for other
	// tools' files.
	for name, want := range map[string]bool{"shared": true, "both": true, "tool": true, "ctx7": true, "web": true,
		"local": false, "claude-a": false, "vs": false, "vsproj": false, "cursor-a": false} {
		if got := cfg.Servers[name].SecretCommands; got != want {
			t.Errorf("%s: SecretCommands %v, want %v", name, got, want)
		}
	}
	// Project stdio servers run in the project unless identical to one of
	// the user's servers, which they then are.
	for name, wantCwd := range map[string]string{"tool": f.proj, "both": f.proj, "local": f.proj, "vsproj": f.proj, "vs": "", "ctx7": "", "cursor-a": ""} {
		if s := cfg.Servers[name]; s.Cwd != wantCwd {
			t.Errorf("%s: cwd %q, want %q", name, s.Cwd, wantCwd)
		}
	}
	if cfg.Servers["ctx7"].Hash != base.Servers["ctx7"].Hash {
		t.Error("ctx7 from .mcp.json, identical to mcpgw's own, has another identity hash")
	}
	if cfg.Servers["cursor-a"] != base.Servers["cursor-a"] {
		t.Error("cursor-a is not the base config's server")
	}
	if s := cfg.Servers["vsproj"]; !slices.Equal(s.Args, []string{f.proj}) {
		t.Errorf("vsproj args %q, want the project directory", s.Args)
	}
	if s := cfg.Servers["shared"]; s.Command != "own-shared" {
		t.Errorf("shared runs %q, want the user's own-shared", s.Command)
	}
	if u := cfg.Servers["web"].URL; u != "https://example.com/mcp?k=s3" {
		t.Errorf("web url %q", u)
	}
	wantFiles := append(slices.Clone(base.Files),
		filepath.Join(f.proj, ".pi/mcp.json"), filepath.Join(f.proj, ".mcp.json"),
		filepath.Join(f.proj, ".vscode/mcp.json"), filepath.Join(f.proj, ".cursor/mcp.json"))
	if !slices.Equal(cfg.Files, wantFiles) {
		t.Errorf("Files:\n got: %q\nwant: %q", cfg.Files, wantFiles)
	}
	if got := base.ProjectFiles(f.proj); !slices.Equal(got, wantFiles[len(base.Files):]) {
		t.Errorf("ProjectFiles = %q, want %q", got, wantFiles[len(base.Files):])
	}
	ignored := func(file, name, fields, userFile string) string {
		return filepath.Join(f.proj, file) + ": mcpServers." + name + ": " + fields + " ignored: the server is yours (" + filepath.Join(f.home, userFile) +
			"), and a project only restricts a server you define (excludeTools, includeTools, approveTools, exposure, disabled); give the project's another name to run it as well"
	}
	wantWarns := append(slices.Clone(base.Warnings), // ctx7 is written as the user's: nothing to say
		ignored(".pi/mcp.json", "shared", "command", ".config/mcpgw/mcp.json"),
		ignored(".vscode/mcp.json", "vs", "command, args", ".cursor/mcp.json"))
	if !slices.Equal(cfg.Warnings, wantWarns) {
		t.Errorf("warnings:\n got: %q\nwant: %q", cfg.Warnings, wantWarns)
	}
	if len(base.Servers) != 5 || base.Servers["shared"].Command != "own-shared" || len(base.Servers["shared"].PolicyNotes) != 0 {
		t.Errorf("WithProject changed the base config: %v", sourcesOf(base))
	}

	// Hash: stable, and it follows the project's files.
	again, err := base.WithProject(f.proj, base.Trust, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if again.Hash != cfg.Hash || cfg.Hash == base.Hash {
		t.Errorf("hash: again equal %v, differs from base %v", again.Hash == cfg.Hash, cfg.Hash != base.Hash)
	}
	writeFile(t, f.proj, ".mcp.json", `{"mcpServers": {"tool": {"command": "node", "args": ["tools/mcp2.js"]}}}`)
	edited, err := base.WithProject(f.proj, base.Trust, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if edited.Hash == cfg.Hash || !slices.Equal(edited.Servers["tool"].Args, []string{"tools/mcp2.js"}) || edited.Servers["web"] != nil {
		t.Errorf("after editing .mcp.json: hash changed %v, tool args %q, web %v", edited.Hash != cfg.Hash, edited.Servers["tool"].Args, edited.Servers["web"])
	}
}

// TestWithProjectSharing: sessions in one directory share a project
// server; the same definition in another directory is another upstream.
func TestWithProjectSharing(t *testing.T) {
	f := newProjectFixture(t)
	other := filepath.Join(filepath.Dir(f.proj), "other")
	data, _ := os.ReadFile(filepath.Join(f.proj, ".mcp.json"))
	writeFile(t, other, ".mcp.json", string(data))
	f.trust(t, filepath.Dir(f.proj))
	base := f.load(t)
	a1, err1 := base.WithProject(f.proj, base.Trust, f.opts)
	a2, err2 := base.WithProject(f.proj+"/", base.Trust, nil) // nil: the options of the load
	b, err3 := base.WithProject(other, base.Trust, f.opts)
	if err := errorsJoin(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	if a1.Servers["tool"].Hash != a2.Servers["tool"].Hash || a1.Hash != a2.Hash {
		t.Error("two sessions in one project see different tool servers")
	}
	if a1.Servers["tool"].Hash == b.Servers["tool"].Hash {
		t.Error("the same project server in two directories has one identity")
	}
	if a1.Servers["web"].Hash != b.Servers["web"].Hash || a1.Servers["ctx7"].Hash != b.Servers["ctx7"].Hash {
		t.Error("a remote server, or one identical to the user's, is not shared across projects")
	}
}

func errorsJoin(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func TestWithProjectUntrusted(t *testing.T) {
	f := newProjectFixture(t)
	sibling := filepath.Join(filepath.Dir(f.proj), "other")
	if err := os.MkdirAll(sibling, 0o755); err != nil {
		t.Fatal(err)
	}
	f.trust(t, sibling) // does not cover the project
	base := f.load(t)
	cfg, err := base.WithProject(f.proj, base.Trust, f.opts)
	if err != nil {
		t.Fatal(err)
	}
	got := sourcesOf(cfg, f.proj, "PROJ", f.home, "HOME")
	want := map[string]string{
		"shared":   "HOME/.config/mcpgw/mcp.json", // not replaced by the project's
		"ctx7":     "HOME/.config/mcpgw/mcp.json",
		"both":     "PROJ/.pi/mcp.json", // listed, untrusted
		"tool":     "PROJ/.mcp.json",
		"web":      "PROJ/.mcp.json",
		"local":    "HOME/.claude.json", // the user's own file: trusted
		"claude-a": "HOME/.claude.json",
		"vs":       "HOME/.cursor/mcp.json", // the project's .vscode file cannot shadow it
		"vsproj":   "PROJ/.vscode/mcp.json",
		"cursor-a": "HOME/.cursor/mcp.json",
	}
	if !maps.Equal(got, want) {
		t.Errorf("sources:\n got: %v\nwant: %v", got, want)
	}
	for name, s := range cfg.Servers {
		untrusted := strings.HasPrefix(got[name], "PROJ/")
		if s.Untrusted != untrusted || s.Enabled == untrusted {
			t.Errorf("%s: Untrusted %v, Enabled %v", name, s.Untrusted, s.Enabled)
		}
		if untrusted && s.SecretCommands {
			t.Errorf("%s: an untrusted project server may run secret commands", name)
		}
	}
	if u := cfg.Servers["web"].URL; u != "https://example.com/mcp?k=${SECRET}" {
		t.Errorf("untrusted web url %q: the environment must not be read for it", u)
	}
	wantWarn := f.proj + ": not trusted, so its 4 project server(s) are listed but not started; to allow them: mcpgw trust " + f.proj
	if n := len(cfg.Warnings); n == 0 || cfg.Warnings[n-1] != wantWarn {
		t.Errorf("warnings %q, want last %q", cfg.Warnings, wantWarn)
	}

	trusted, err := f.load(t).WithProject(f.proj, f.trust(t, f.proj), f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if trusted.Hash == cfg.Hash {
		t.Error("trusting the project did not change the view's hash")
	}
}

// TestWithProjectErrors: a broken file in a trusted project is an error;
// in an untrusted one, a warning.
func TestWithProjectErrors(t *testing.T) {
	f := newProjectFixture(t)
	mcpJSON := writeFile(t, f.proj, ".mcp.json", `{"mcpServers": {"a": {"command": "x",`)
	writeFile(t, f.proj, ".pi/mcp.json", `{"mcpServers": {"b": {"lifecycle": "eager"}}}`)

	cfg, err := f.base.WithProject(f.proj, f.base.Trust, f.opts)
	if err != nil {
		t.Fatalf("untrusted: %v", err)
	}
	wantWarns := []string{
		filepath.Join(f.proj, ".pi/mcp.json") + ": mcpServers.b: needs command or url; server skipped",
		mcpJSON + ":2:1: unexpected end of file; ignored",
		f.proj + ": not trusted, so its 1 project server(s) are listed but not started; to allow them: mcpgw trust " + f.proj, // vsproj
	}
	if !slices.Equal(cfg.Warnings, wantWarns) {
		t.Errorf("untrusted warnings:\n got: %q\nwant: %q", cfg.Warnings, wantWarns)
	}

	ts := f.trust(t, f.proj)
	_, err = f.base.WithProject(f.proj, ts, f.opts)
	want := filepath.Join(f.proj, ".pi/mcp.json") + ": mcpServers.b: needs command or url\n" + mcpJSON + ":2:1: unexpected end of file"
	if err == nil || err.Error() != want {
		t.Errorf("trusted: %v\nwant: %s", err, want)
	}
}
