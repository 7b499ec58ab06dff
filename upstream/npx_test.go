//go:build unix

package upstream

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// writeFile writes body to root/rel, creating directories.
func writeFile(t *testing.T, root, rel, body string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakeNpxCache lays out an npm _npx cache under home.
func fakeNpxCache(t *testing.T, home string) {
	npx := filepath.Join(home, ".npm", "_npx")
	writeFile(t, npx, "aaa/node_modules/@scope/server/package.json",
		`{"name":"@scope/server","version":"1.2.0","bin":{"scope-server":"dist/index.js"}}`, 0o644)
	writeFile(t, npx, "aaa/node_modules/@scope/server/dist/index.js", "console.log(1)\n", 0o644)
	writeFile(t, npx, "bbb/node_modules/plain/package.json", `{"name":"plain","version":"0.1.0","bin":"cli.js"}`, 0o644)
	writeFile(t, npx, "bbb/node_modules/plain/cli.js", "#!/usr/bin/env node\n", 0o755)
	writeFile(t, npx, "ccc/node_modules/native-bin/package.json", `{"name":"native-bin","version":"2.0.0","bin":{"native-bin":"bin/run"}}`, 0o644)
	writeFile(t, npx, "ccc/node_modules/native-bin/bin/run", "#!/bin/sh\necho hi\n", 0o755)
	writeFile(t, npx, "ddd/node_modules/multi/package.json", `{"name":"multi","version":"1.0.0","bin":{"a":"a.js","multi":"m.js"}}`, 0o644)
	writeFile(t, npx, "ddd/node_modules/multi/a.js", "", 0o644)
	writeFile(t, npx, "ddd/node_modules/multi/m.js", "", 0o644)
	writeFile(t, npx, "eee/node_modules/nobin/package.json", `{"name":"nobin","version":"1.0.0"}`, 0o644)
}

func TestResolveNpx(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	fakeNpxCache(t, home)
	bin := t.TempDir()
	node := writeFile(t, bin, "node", "#!/bin/sh\n", 0o755)
	npx := filepath.Join(home, ".npm", "_npx")
	env := []string{"HOME=" + home, "PATH=" + bin}

	tests := []struct {
		name    string
		command string
		args    []string
		env     []string
		want    []string // command then args; nil = not resolved
		binDir  string
	}{
		{"scoped exact version", "npx", []string{"-y", "@scope/server@1.2.0", "--port", "1"}, env,
			[]string{node, npx + "/aaa/node_modules/@scope/server/dist/index.js", "--port", "1"}, npx + "/aaa/node_modules/.bin"},
		{"scoped latest", "/usr/bin/npx", []string{"--yes", "@scope/server@latest"}, env,
			[]string{node, npx + "/aaa/node_modules/@scope/server/dist/index.js"}, npx + "/aaa/node_modules/.bin"},
		{"caret range", "npx", []string{"-y", "@scope/server@^1.1"}, env,
			[]string{node, npx + "/aaa/node_modules/@scope/server/dist/index.js"}, npx + "/aaa/node_modules/.bin"},
		{"caret range not met", "npx", []string{"-y", "@scope/server@^2"}, env, nil, ""},
		{"dist-tag", "npx", []string{"-y", "@scope/server@next"}, env, nil, ""},
		{"version mismatch", "npx", []string{"-y", "@scope/server@1.3.0"}, env, nil, ""},
		{"string bin", "npx", []string{"-y", "plain", "a", "b"}, env,
			[]string{node, npx + "/bbb/node_modules/plain/cli.js", "a", "b"}, npx + "/bbb/node_modules/.bin"},
		{"native binary runs directly", "npx", []string{"native-bin", "x"}, env,
			[]string{npx + "/ccc/node_modules/native-bin/bin/run", "x"}, npx + "/ccc/node_modules/.bin"},
		{"bin named after the package", "npx", []string{"multi"}, env,
			[]string{node, npx + "/ddd/node_modules/multi/m.js"}, npx + "/ddd/node_modules/.bin"},
		{"--package and a bin", "npx", []string{"--package", "multi", "a", "--flag"}, env,
			[]string{node, npx + "/ddd/node_modules/multi/a.js", "--flag"}, npx + "/ddd/node_modules/.bin"},
		{"--package= form", "npx", []string{"-y", "--package=multi", "--", "a"}, env,
			[]string{node, npx + "/ddd/node_modules/multi/a.js"}, npx + "/ddd/node_modules/.bin"},
		{"not cached", "npx", []string{"-y", "missing"}, env, nil, ""},
		{"no bin", "npx", []string{"-y", "nobin"}, env, nil, ""},
		{"unknown flag", "npx", []string{"--registry=https://example.com", "plain"}, env, nil, ""},
		{"git spec", "npx", []string{"-y", "github:user/repo"}, env, nil, ""},
		{"path spec", "npx", []string{"./local"}, env, nil, ""},
		{"no node on PATH", "npx", []string{"-y", "plain"}, []string{"HOME=" + home, "PATH=/nonexistent"}, nil, ""},
		{"not npx", "uvx", []string{"plain"}, env, nil, ""},
		{"no package", "npx", []string{"-y"}, env, nil, ""},
		{"npm_config_cache", "npx", []string{"plain"}, []string{"HOME=/nonexistent", "PATH=" + bin, "npm_config_cache=" + filepath.Join(home, ".npm")},
			[]string{node, npx + "/bbb/node_modules/plain/cli.js"}, npx + "/bbb/node_modules/.bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, ok := resolveNpx(tt.command, tt.args, tt.env)
			if tt.want == nil {
				if ok {
					t.Fatalf("resolved to %s %v, want no resolution", res.Command, res.Args)
				}
				return
			}
			if !ok {
				t.Fatal("not resolved")
			}
			got := append([]string{res.Command}, res.Args...)
			for i := range got {
				got[i] = filepath.ToSlash(got[i])
			}
			if !slices.Equal(got, tt.want) || filepath.ToSlash(res.BinDir) != tt.binDir {
				t.Errorf("got %v (bin dir %s)\nwant %v (bin dir %s)", got, res.BinDir, tt.want, tt.binDir)
			}
		})
	}
}

// TestNpxServerRunsWithoutNpx starts an "npx -y fake-mcp" server with no npx
// on PATH: it must run through the cached package's bin with node (here a
// script that records its arguments and becomes the test server).
func TestNpxServerRunsWithoutNpx(t *testing.T) {
	home := t.TempDir()
	npx := filepath.Join(home, ".npm", "_npx")
	script := writeFile(t, npx, "f00/node_modules/fake-mcp/server.js", "// fake\n", 0o644)
	writeFile(t, npx, "f00/node_modules/fake-mcp/package.json", `{"name":"fake-mcp","version":"1.0.0","bin":"server.js"}`, 0o644)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	argv := filepath.Join(t.TempDir(), "argv")
	writeFile(t, bin, "node", "#!/bin/sh\necho \"$@\" > "+argv+"\necho \"$PATH\" >> "+argv+"\nexec "+exe+"\n", 0o755)
	t.Setenv("HOME", home)
	t.Setenv("PATH", bin)

	env := map[string]string{fakeupstream.EnvServe: "stdio"}
	srv := &registry.Server{Name: "fake", Command: "npx", Args: []string{"-y", "fake-mcp@1.0.0", "--stdio"}, Env: env,
		Hash: fakeupstream.Hash("npx", nil, env)}
	p := newPool(t, nil)
	u := p.Upstream(srv)
	pid := atoi(t, call(t, u, "pid", nil))
	if st := u.Status(); st.PID != pid {
		t.Errorf("status PID %d, server PID %d: node should exec the server, not wrap it", st.PID, pid)
	}
	b, err := os.ReadFile(argv)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || lines[0] != script+" --stdio" {
		t.Errorf("node ran with %q, want %q", lines[0], script+" --stdio")
	}
	if want := filepath.Join(npx, "f00", "node_modules", ".bin") + ":" + bin; lines[1] != want {
		t.Errorf("PATH = %q, want %q", lines[1], want)
	}
}

func TestSatisfies(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		installed, spec string
		ok, known       bool
	}{
		{"1.2.3", "", true, true},
		{"1.2.3", "latest", true, true},
		{"1.2.3", "1.2.3", true, true},
		{"1.2.3", "v1.2.3", true, true},
		{"1.2.3", "1.2.4", false, true},
		{"1.2.3", "1", true, true},
		{"1.2.3", "1.x", true, true},
		{"1.2.3", "1.2", true, true},
		{"1.2.3", "1.3", false, true},
		{"1.2.3", "^1.0.0", true, true},
		{"1.2.3", "^1.2.4", false, true},
		{"1.2.3", "^2.0.0", false, true},
		{"0.2.3", "^0.2.1", true, true},
		{"0.3.0", "^0.2.1", false, true},
		{"1.2.3", "~1.2.0", true, true},
		{"1.3.0", "~1.2.0", false, true},
		{"1.2.3", "next", false, false},
		{"1.2.3", ">=1.0.0 <2", true, true},
		{"2.0.0", ">=1.0.0 <2", false, true},
		{"1.2.3", "1.0.0 || ^1.2.0", true, true},
		// Prereleases are below their release, and meet only ranges that ask
		// for a prerelease.
		{"1.3.0-beta.1", "^1.2.0", false, true},
		{"2.0.0-rc.1", "1.x", false, true},
		{"1.2.3-beta", "1.2.3", false, true},
		{"1.2.3-beta.2", "^1.2.3-beta.1", true, true},
		{"1.2.3-beta.1", "^1.2.3-beta.2", false, true},
		{"1.2.3", "^1.2.3-beta.1", true, true},
		{"1.2.3-beta.2", "1.2.3-beta.2", true, true},
		{"not a version", "^1.0.0", false, false},
	} {
		ok, known := satisfies(tt.installed, tt.spec)
		if ok != tt.ok || known != tt.known {
			t.Errorf("satisfies(%q, %q) = %v, %v; want %v, %v", tt.installed, tt.spec, ok, known, tt.ok, tt.known)
		}
	}
}

// TestMissingCommandSaysHowToGetIt: a command the daemon cannot find fails
// the connect with what is missing and where to get it.
func TestMissingCommandSaysHowToGetIt(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	p := New(nil)
	defer p.Close()
	for _, tc := range []struct{ command, hint string }{
		{"uvx", "install uv (https://docs.astral.sh/uv/"},
		{"no-such-mcp-server", "install it, or give its full path"},
	} {
		srv := &registry.Server{Name: "x" + tc.command, Command: tc.command, Hash: "h-" + tc.command, Lifecycle: registry.LifecycleLazy, Enabled: true}
		_, err := p.Upstream(srv).Connect(context.Background())
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q is not on the daemon's PATH; %s", tc.command, tc.hint)) {
			t.Errorf("connecting %s: %v", tc.command, err)
		}
	}
}
