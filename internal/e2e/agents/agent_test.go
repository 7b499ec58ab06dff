//go:build unix

package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/internal/e2e"
)

// Coding agents end-to-end: the real agent from the npm registry,
// configured with mcpgw as the README's section for it says, against the
// real daemon, with the model replaced by a scripted fake model on
// loopback speaking the agent's own model API. Each test asserts what the
// model received. The harness here is shared; each agent has its own file.

// agentEnv is a fresh home for one agent and the daemon its shim starts.
// mcpgw's files sit where a user's do by default under that home
// (~/.config/mcpgw/mcp.json, ~/.local/state/mcpgw), so an agent that
// passes its MCP servers a trimmed environment still reaches them.
type agentEnv struct {
	t     *testing.T
	bin   string // mcpgw
	home  string
	dir   string // the agent's working directory: a project under home
	url   string // the daemon's HTTP base
	sock  string // the daemon's socket, where mcpgw puts it by default
	model *e2e.FakeModel
	env   []string
	// exited is closed when the agent start started last has ended.
	exited <-chan struct{}
}

// needAgent returns the agent's executable under the e2e packages, or
// skips the test (fails it under CI) when it is not installed.
func needAgent(t *testing.T, rel string) string {
	t.Helper()
	path := e2e.Path(rel)
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("agent not installed (%v); install with: %s", err, e2e.NPMInstallHint)
		}
		t.Skipf("agent not installed (%v); install with: %s", err, e2e.NPMInstallHint)
	}
	return path
}

// newAgentEnv writes mcpgw's config (servers) to its default place under
// a new home and starts the fake model on wire with script.
func newAgentEnv(t *testing.T, wire e2e.ModelWire, servers map[string]any, script ...e2e.ModelStep) *agentEnv {
	t.Helper()
	e := &agentEnv{t: t, bin: e2e.BuildMcpgw(t), home: t.TempDir()}
	e.dir = filepath.Join(e.home, "project")
	if err := os.MkdirAll(e.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	e2e.WriteJSON(t, filepath.Join(e.home, ".config", "mcpgw", "mcp.json"), map[string]any{"mcpServers": servers})
	port := e2e.FreePort(t)
	e.url = fmt.Sprintf("http://127.0.0.1:%d", port)
	e.sock = filepath.Join(e.home, "run", "mcpgw", "mcpgw.sock")
	e.model = e2e.NewFakeModelWire(t, wire, script...)
	node := e2e.Path("node_modules/node/bin")
	// Left out: CI, under which agents change behaviour (the tests should
	// see what a user sees), and the agents' own variables, which could
	// point them at the developer's configuration or models.
	e.env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return slices.ContainsFunc([]string{"CI=", "ANTHROPIC_", "CLAUDE_", "GEMINI_", "GOOGLE_", "OPENAI_", "CODEX_", "OPENCODE_"},
			func(prefix string) bool { return strings.HasPrefix(kv, prefix) })
	})
	e.env = append(e.env, "HOME="+e.home, "XDG_RUNTIME_DIR="+filepath.Join(e.home, "run"),
		"XDG_STATE_HOME="+filepath.Join(e.home, ".local", "state"), "XDG_CONFIG_HOME="+filepath.Join(e.home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(e.home, ".cache"), "XDG_DATA_HOME="+filepath.Join(e.home, ".local", "share"),
		"MCPGW_LISTEN=127.0.0.1:"+fmt.Sprint(port), "NO_COLOR=1",
		// exec sets no PWD when Env is given: the test's would be kept, and
		// an agent that believes it (opencode) would work in the repository.
		"PWD="+e.dir,
		"PATH="+node+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Cleanup(func() {
		e.stopDaemon()
		if t.Failed() {
			if log, err := os.ReadFile(filepath.Join(e.home, ".local", "state", "mcpgw", "mcpgw.log")); err == nil {
				t.Logf("daemon log:\n%s", log)
			}
		}
	})
	return e
}

// stopDaemon ends the running daemon, the test's or one a shim started:
// found on its socket, which it serves whether or not it got its port,
// else at its URL.
func (e *agentEnv) stopDaemon() {
	e2e.StopDaemonOn(e.t, e.sock)
	e2e.StopDaemonAt(e.t, e.url)
}

// setenv adds variables to the agent's environment.
func (e *agentEnv) setenv(kv ...string) { e.env = append(e.env, kv...) }

// run runs the agent (name and args) in its working directory, in a heavy
// slot, and returns its combined output; the test fails if it fails.
func (e *agentEnv) run(name string, args ...string) string {
	e.t.Helper()
	return e.start(name, args...)()
}

// start starts the agent as run does and returns at once; wait waits for
// it to end and returns what run returns. Call wait on the test's
// goroutine, once.
func (e *agentEnv) start(name string, args ...string) (wait func() string) {
	e.t.Helper()
	release := e2e.Heavy()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = e.dir
	cmd.Env = e.env
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Start()
	if err != nil {
		cancel()
		release()
		e.t.Fatalf("starting %s: %v", filepath.Base(name), err)
	}
	done := make(chan struct{})
	e.exited = done
	go func() {
		defer close(done)
		defer release()
		defer cancel()
		err = cmd.Wait()
	}()
	e.t.Cleanup(func() { cancel(); <-done })
	return func() string {
		e.t.Helper()
		<-done
		if err != nil {
			e.model.LogRequests()
			e.t.Fatalf("%s: %v\n%s", filepath.Base(name), err, out.String())
		}
		return out.String()
	}
}

// approveFromCLI waits until a call of tool waits for approval and allows
// it once with `mcpgw approve ID`, as the person would. It returns what
// `mcpgw approve --list` showed.
func (e *agentEnv) approveFromCLI(tool string) string {
	e.t.Helper()
	// Until the agent asks, or ends without asking: an agent starting on
	// a busy machine can take minutes, and its own limit (start's)
	// bounds the wait.
	var id string
	for id == "" {
		select {
		case <-e.exited:
			e.model.LogRequests()
			e.t.Fatalf("the agent ended before a call of %s waited for approval", tool)
		case <-time.After(50 * time.Millisecond):
		}
		resp, err := e.daemonGet("/-/status")
		if err != nil {
			continue // the shim has not started the daemon yet
		}
		var r api.Report
		_ = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		for _, p := range r.Approvals {
			if p.Tool == tool {
				id = p.ID
			}
		}
	}
	mcpgw := func(args ...string) string {
		cmd := exec.Command(e.bin, args...)
		cmd.Env = e.env
		out, err := cmd.CombinedOutput()
		if err != nil {
			e.t.Fatalf("mcpgw %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	list := mcpgw("approve", "--list")
	e.t.Logf("mcpgw approve --list:\n%s", list)
	mcpgw("approve", id)
	return list
}

// daemonGet gets path from the daemon on its unix socket, where it serves
// the same HTTP API as at its URL: the daemon a shim started keeps
// serving the socket when another program took the test's port before it
// could bind it (it then serves no TCP port), and that program must not
// be taken for it.
func (e *agentEnv) daemonGet(path string) (*http.Response, error) {
	client := &http.Client{Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", e.sock)
		},
	}}
	return client.Get("http://localhost" + path)
}

// turns logs what the model got and fails the test unless the
// conversation had want turns; it returns them.
func (e *agentEnv) turns(want int) []e2e.ModelRequest {
	e.t.Helper()
	e.model.LogRequests()
	reqs := e.model.Requests()
	if len(reqs) != want {
		e.t.Fatalf("the model was asked %d times, want %d", len(reqs), want)
	}
	return reqs
}

// metric is a sample of the daemon's /metrics, by its name and labels as
// written there, or "(absent)".
func (e *agentEnv) metric(series string) string {
	e.t.Helper()
	resp, err := e.daemonGet("/metrics")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return "(absent)"
}
