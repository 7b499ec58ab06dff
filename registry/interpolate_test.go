package registry

import (
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestInterpolate(t *testing.T) {
	env := map[string]string{
		"A":     "alpha",
		"B_2":   "beta",
		"CHAIN": "{env:A}",
		"DOLL":  "${A}",
		"EMPTY": "",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		in, want string
		missing  []string
	}{
		{"plain", "plain", nil},
		{"${A}", "alpha", nil},
		{"$env:A", "alpha", nil},
		{"{env:A}", "alpha", nil},
		{"x${A}y$env:B_2-z{env:A}", "xalphaybeta-zalpha", nil},
		{"$env:B_2.suffix", "beta.suffix", nil}, // names are \w+
		{"$env:A_B", "", []string{"A_B"}},       // greedy: A_B, not A
		{"${UNSET}|$env:UNSET|{env:OTHER}", "||", []string{"UNSET", "OTHER"}},
		{"${A-B} ${} $env: {env:} $A", "${A-B} ${} $env: {env:} $A", nil},
		{"$${A}", "$alpha", nil},
		// The three passes run in turn, so a substituted value is scanned by
		// the later passes (pi-mcp-adapter's behaviour), not the earlier ones.
		{"${CHAIN}", "alpha", nil},
		{"$env:DOLL", "${A}", nil},
	}
	for _, tt := range tests {
		var missing []string
		got := interpolate(tt.in, lookup, &missing)
		if got != tt.want || !reflect.DeepEqual(missing, tt.missing) {
			t.Errorf("interpolate(%q) = %q, missing %q; want %q, missing %q", tt.in, got, missing, tt.want, tt.missing)
		}
	}
}

func TestInterpolateSecret(t *testing.T) {
	lookup := func(k string) (string, bool) { return map[string]string{"T": "tok"}[k], k == "T" }
	tests := []struct {
		in, want string
		missing  []string
	}{
		{"Bearer ${T}", "Bearer tok", nil},
		// A command: left for the upstream to run, not interpolated.
		{"!op read op://vault/${U}", "!op read op://vault/${U}", nil},
		// An escaped "!": interpolated, the escape kept for the upstream.
		{"!!literal-${T}-${U}", "!!literal-tok-", []string{"U"}},
		{"!!!x", "!!!x", nil},
		{"", "", nil},
	}
	for _, tt := range tests {
		var missing []string
		if got := interpolateSecret(tt.in, lookup, &missing); got != tt.want || !reflect.DeepEqual(missing, tt.missing) {
			t.Errorf("interpolateSecret(%q) = %q, missing %q; want %q, missing %q", tt.in, got, missing, tt.want, tt.missing)
		}
	}
}

func TestExpandHome(t *testing.T) {
	tests := []struct{ in, want string }{
		{"~", "/home/u"},
		{"~/", "/home/u"},
		{"~/src/x", "/home/u/src/x"},
		{`~\src`, "/home/u/src"},
		{"~other/src", "~other/src"},
		{"/abs/~/x", "/abs/~/x"},
		{"rel", "rel"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := expandHome(tt.in, "/home/u"); got != tt.want {
			t.Errorf("expandHome(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestOwnVarsNotInterpolated: mcpgw's own variables (the daemon's token
// above all) are never expanded into what an upstream receives, whichever
// file writes them (mcpgw's own, an import, a trusted project) and in
// whichever syntax; each use is a warning naming the field.
func TestOwnVarsNotInterpolated(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	def := `{"command": "srv", "args": ["--token=${MCPGW_TOKEN}", "{env:MCPGW_URL}"],
		"env": {"A": "${MCPGW_TOKEN}", "B": "x$env:mcpgw_token", "C": "!!${MCPGW_TOKEN}", "D": "${KEPT}"}}`
	remote := `{"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${MCPGW_TOKEN}"},
		"bearerTokenEnv": "MCPGW_TOKEN"}`
	config := writeFile(t, home, ".config/mcpgw/mcp.json", `{"imports": ["pi"], "mcpServers": {"own": `+def+`, "ownremote": `+remote+`}}`)
	piFile := writeFile(t, home, ".pi/agent/mcp.json", `{"mcpServers": {"pi": `+def+`}}`)
	projFile := writeFile(t, proj, ".mcp.json", `{"mcpServers": {"proj": `+def+`}}`)
	env := map[string]string{"MCPGW_TOKEN": "s3cret", "mcpgw_token": "s3cret", "MCPGW_URL": "http://127.0.0.1:1", "KEPT": "kept"}
	opts := &LoadOptions{Home: home, Getenv: func(k string) string { return env[k] }, TrustFile: filepath.Join(home, "trust.json")}
	ts, err := LoadTrust(opts.TrustFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Add(proj); err != nil {
		t.Fatal(err)
	}
	if err := ts.Save(); err != nil {
		t.Fatal(err)
	}
	base, err := Load(config, opts)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := base.WithProject(proj, base.Trust, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"own", "pi", "proj"} {
		s := cfg.Servers[name]
		if s == nil {
			t.Fatalf("no server %s", name)
		}
		wantEnv := map[string]string{"A": "", "B": "x", "C": "!!", "D": "kept"}
		if !maps.Equal(s.Env, wantEnv) || !slices.Equal(s.Args, []string{"--token=", ""}) {
			t.Errorf("%s: env %q, args %q; want env %q, args [--token= \"\"]", name, s.Env, s.Args, wantEnv)
		}
	}
	r := cfg.Servers["ownremote"]
	if r.Headers["Authorization"] != "Bearer " || r.BearerTokenEnv != "" {
		t.Errorf("ownremote: headers %q, bearerTokenEnv %q", r.Headers, r.BearerTokenEnv)
	}
	own := func(field, name string) string {
		return field + ": " + name + ` is mcpgw's own variable, never given to an upstream; using ""`
	}
	for _, w := range []string{
		own("mcpServers.own.args[0]", "MCPGW_TOKEN"),
		own("mcpServers.own.args[1]", "MCPGW_URL"),
		own("mcpServers.own.env.A", "MCPGW_TOKEN"),
		own("mcpServers.own.env.B", "mcpgw_token"),
		own("mcpServers.own.env.C", "MCPGW_TOKEN"),
		own("mcpServers.ownremote.headers.Authorization", "MCPGW_TOKEN"),
		`mcpServers.ownremote.bearerTokenEnv: MCPGW_TOKEN is mcpgw's own variable, never given to an upstream; ignored`,
		piFile + ": " + own("mcpServers.pi.env.A", "MCPGW_TOKEN"),
		projFile + ": " + own("mcpServers.proj.env.A", "MCPGW_TOKEN"),
	} {
		if !slices.Contains(cfg.Warnings, w) {
			t.Errorf("no warning %q in\n%q", w, cfg.Warnings)
		}
	}
	for _, w := range cfg.Warnings {
		if strings.Contains(w, "s3cret") {
			t.Errorf("a warning holds the token: %q", w)
		}
	}
}
