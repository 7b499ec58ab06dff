//go:build linux

package torture

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	_ "github.com/mcpgw/mcpgw/cachefile"
	_ "github.com/mcpgw/mcpgw/deploy"
	_ "github.com/mcpgw/mcpgw/gateway"
	"github.com/mcpgw/mcpgw/internal/proctest"
	_ "github.com/mcpgw/mcpgw/registry"
	_ "github.com/mcpgw/mcpgw/upstream"
)

var mcpgwBin string

func TestMain(m *testing.M) {
	if mode := os.Getenv(envUpstream); mode != "" {
		serveHostile(mode)
		os.Exit(0)
	}
	var err error
	if mcpgwBin, err = proctest.Build("github.com/mcpgw/mcpgw/cmd/mcpgw", false); err != nil {
		fmt.Fprintln(os.Stderr, "building mcpgw:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// daemon is a running `mcpgw serve` with its files in dir.
type daemon struct {
	t      *testing.T
	dir    string
	config string
	url    string
	socket string
	pids   string // the upstreams' PID file
	cmd    *exec.Cmd
	log    *proctest.Buffer
	done   chan struct{}
}

// hostile returns the config entry of a hostile upstream in mode; role
// sets it apart from others in the same mode (a server of its own).
func (d *daemon) hostile(role, mode string, extra map[string]any) map[string]any {
	exe, err := os.Executable()
	if err != nil {
		d.t.Fatal(err)
	}
	e := map[string]any{"command": exe, "env": map[string]any{envUpstream: mode, envPIDFile: d.pids, "MCPGW_TORTURE_ROLE": role}}
	for k, v := range extra {
		e[k] = v
	}
	return e
}

func (d *daemon) writeConfig(servers map[string]any) {
	d.t.Helper()
	b, err := json.Marshal(map[string]any{"mcpServers": servers, "settings": map[string]any{"mode": "direct"}})
	if err != nil {
		d.t.Fatal(err)
	}
	if err := os.WriteFile(d.config, b, 0o600); err != nil {
		d.t.Fatal(err)
	}
}

// newDaemon prepares a daemon's directory; servers returns its config.
func newDaemon(t *testing.T, servers func(d *daemon) map[string]any) *daemon {
	// The test cache must not keep a result of an older mcpgw: the
	// product's packages are imported (blank) for that, and the command's
	// own files are read here, in a test, where the cache notes them.
	if files, err := filepath.Glob(filepath.Join("..", "..", "cmd", "mcpgw", "*.go")); err == nil {
		for _, f := range files {
			_, _ = os.ReadFile(f)
		}
	}
	dir := t.TempDir()
	d := &daemon{t: t, dir: dir, config: filepath.Join(dir, "mcp.json"), socket: filepath.Join(dir, "run", "mcpgw.sock"),
		pids: filepath.Join(dir, "upstream.pids"), log: &proctest.Buffer{}, done: make(chan struct{})}
	d.writeConfig(servers(d))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	d.url = "http://" + addr
	d.cmd = exec.Command(mcpgwBin, "serve", "--config", d.config, "--listen", addr, "--socket", d.socket,
		"--cache", filepath.Join(dir, "cache.json"), "--log-format", "text")
	d.cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"XDG_RUNTIME_DIR="+filepath.Join(dir, "run"), "XDG_STATE_HOME="+filepath.Join(dir, "state"))
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = d.cmd.Wait(); close(d.done) }()
	t.Cleanup(d.stop)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := http.Get(d.url + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if !d.alive() || time.Now().After(deadline) {
			t.Fatalf("daemon did not come up:\n%s", d.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return d
}

func (d *daemon) alive() bool {
	select {
	case <-d.done:
		return false
	default:
		return true
	}
}

// stop ends the daemon (SIGTERM, then SIGKILL) and every upstream process
// and grandchild it started, by PID, failing if any outlived it.
func (d *daemon) stop() {
	if d.alive() {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(60 * time.Second):
			d.t.Errorf("daemon ignored SIGTERM for 60 s")
			_ = d.cmd.Process.Kill()
			<-d.done
		}
	}
	for _, pid := range d.upstreamPIDs() {
		if len(proctest.WaitGone(30*time.Second, pid)) == 0 {
			continue
		}
		d.t.Errorf("upstream process %d outlived the daemon", pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func (d *daemon) upstreamPIDs() []int {
	b, _ := os.ReadFile(d.pids)
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// rss returns the daemon's resident and peak resident memory in MB.
func (d *daemon) rss() (now, peak float64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			now = kb / 1024
		case "VmHWM:":
			peak = kb / 1024
		}
	}
	return now, peak
}

// session opens an MCP session to the daemon over Streamable HTTP.
func (d *daemon) session(ctx context.Context) *mcp.ClientSession {
	d.t.Helper()
	return d.sessionWith(ctx, nil)
}

// sessionWith is session with extra request headers.
func (d *daemon) sessionWith(ctx context.Context, h http.Header) *mcp.ClientSession {
	d.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "torture", Version: "1"}, nil)
	hc := &http.Client{Transport: headerTransport(h)}
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.url + "/mcp", MaxRetries: -1, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		d.t.Fatalf("connecting to the daemon: %v\n%s", err, d.log)
	}
	d.t.Cleanup(func() { s.Close() })
	return s
}

// call calls a tool and returns its text and whether it is an error (a
// protocol error counts as one, with its message as the text).
func call(ctx context.Context, s *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return err.Error(), true
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func readAll(r io.Reader) string {
	b, _ := io.ReadAll(r)
	return string(b)
}

// headerTransport adds h to every request.
type headerTransport http.Header

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}
