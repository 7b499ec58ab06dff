//go:build unix

package main

import (
	"context"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestDockerWritesOnlyData runs the daemon as the image runs it (the final
// stage's ENV and CMD, the volumes moved to temporary directories) with a
// home and a temporary directory of its own, calls a tool through it, and
// checks that everything it wrote is on the data volume: the image can run
// with a read-only root (docker run --read-only, and the Helm chart's pods).
func TestDockerWritesOnlyData(t *testing.T) {
	t.Parallel()
	stages, _ := readDockerfile(t)
	static := stages[len(stages)-1]
	root := t.TempDir()
	dirs := map[string]string{}
	for _, d := range []string{"config", "data", "home", "tmp", "cli"} {
		dirs[d] = filepath.Join(root, d)
		if err := os.Mkdir(dirs[d], 0o700); err != nil {
			t.Fatal(err)
		}
	}
	volume := strings.NewReplacer("/config", dirs["config"], "/data", dirs["data"])
	writeTestFile(t, filepath.Join(dirs["config"], "mcp.json"),
		`{"mcpServers": {"go": {"command": "`+e2e.TestServerBin+`", "args": ["testserver"]}}}`)

	env := withoutVars(os.Environ(), "HOME", "TMPDIR", "XDG_", "MCPGW_", "npm_config_", "NPM_CONFIG_", "NOTIFY_SOCKET")
	var imageEnv []string
	for _, in := range static.all("ENV") {
		for _, kv := range strings.Fields(in.Args) {
			imageEnv = append(imageEnv, volume.Replace(kv))
		}
	}
	if !slices.Contains(imageEnv, "XDG_STATE_HOME="+dirs["data"]) {
		t.Fatalf("the image's ENV %q does not put the state directory on /data", imageEnv)
	}
	const token = "container-token"
	env = append(append(env, imageEnv...), "HOME="+dirs["home"], "TMPDIR="+dirs["tmp"], "MCPGW_TOKEN="+token)

	port := strconv.Itoa(e2e.FreePort(t))
	var args []string
	for _, a := range execForm(t, static.one(t, "CMD")) {
		a = strings.Replace(a, "0.0.0.0:7332", "127.0.0.1:"+port, 1)
		args = append(args, volume.Replace(a))
	}
	cmd := exec.Command(e2e.BuildMcpgw(t), args...)
	cmd.Env = env
	cmd.Dir = dirs["home"]
	p := e2e.StartProcess(t, cmd)
	base := "http://127.0.0.1:" + port
	if err := e2e.WaitHTTPOrExit(base+"/healthz", p.Exited, e2e.WaitLimit); err != nil {
		t.Fatalf("%v\n%s", err, p.Output.String())
	}
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok\n" {
		t.Errorf("/healthz: %d %q, want 200 \"ok\\n\"", resp.StatusCode, body)
	}

	// A tool call through the daemon: it starts the upstream, writes the
	// metadata cache and an audit line.
	ctx, cancel := context.WithTimeout(context.Background(), e2e.WaitLimit)
	defer cancel()
	call := exec.CommandContext(ctx, e2e.BuildMcpgw(t), "call", "go_echo", `{"message":"from the container"}`)
	call.Env = append(withoutVars(os.Environ(), "HOME", "XDG_", "MCPGW_"),
		"HOME="+dirs["cli"], "MCPGW_URL="+base, "MCPGW_TOKEN="+token)
	out, err := call.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "from the container") {
		t.Fatalf("mcpgw call go_echo: %v\n%s", err, out)
	}
	p.Stop()

	for _, d := range []string{"home", "tmp"} {
		if got := tree(t, dirs[d]); len(got) != 0 {
			t.Errorf("the daemon wrote to its %s directory, which is read-only in the image: %q", d, got)
		}
	}
	if got := tree(t, dirs["config"]); !slices.Equal(got, []string{"mcp.json"}) {
		t.Errorf("the config volume holds %q, want mcp.json alone", got)
	}
	data := tree(t, dirs["data"])
	for _, want := range []string{"mcp-cache.json", "mcpgw/audit.jsonl", "mcpgw/audit.key"} {
		if !slices.Contains(data, want) {
			t.Errorf("the data volume lacks %s: %q", want, data)
		}
	}
	audit, _ := os.ReadFile(filepath.Join(dirs["data"], "mcpgw", "audit.jsonl"))
	if !strings.Contains(string(audit), `"echo"`) {
		t.Errorf("no audit line for the call in the data volume's audit log:\n%s", audit)
	}
}

// withoutVars is env less the variables whose names start with one of
// the prefixes.
func withoutVars(env []string, prefixes ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, p := range prefixes {
			if name == p || strings.HasSuffix(p, "_") && strings.HasPrefix(name, p) {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// tree lists the files under dir (not directories), slash-separated and
// relative to it.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDockerStateOnVolume: both images keep the daemon's state, and the
// node image npm's cache and its upstreams' caches, on the data volume.
func TestDockerStateOnVolume(t *testing.T) {
	t.Parallel()
	stages, _ := readDockerfile(t)
	want := map[string][]string{
		"static":    {"XDG_STATE_HOME=/data"},
		"with-node": {"XDG_STATE_HOME=/data", "XDG_CACHE_HOME=/data/cache", "npm_config_cache=/data/npm"},
	}
	for _, s := range stages {
		if want[s.Name] == nil {
			continue
		}
		var env []string
		for _, in := range s.all("ENV") {
			env = append(env, strings.Fields(in.Args)...)
		}
		for _, kv := range want[s.Name] {
			if !slices.Contains(env, kv) {
				t.Errorf("%s: no ENV %s (ENV %q)", s.Name, kv, env)
			}
		}
		delete(want, s.Name)
	}
	if len(want) != 0 {
		t.Errorf("no stages %v", want)
	}
}
