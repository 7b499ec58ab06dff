//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/internal/control"
	"github.com/mcpgw/mcpgw/internal/proctest"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// buildMcpgw returns this package's binary, built once per test process,
// with -race when the test binary was (proctest.Build).
func BuildMcpgw(t testing.TB) string {
	t.Helper()
	path, err := proctest.Build(filepath.Join(Root, "cmd", "mcpgw"), proctest.RaceEnabled())
	if err != nil {
		t.Fatalf("building mcpgw: %v", err)
	}
	return path
}

// waitCached waits until the daemon's cache file holds entries for names.
func WaitCached(t *testing.T, path string, names ...string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var f struct {
			Servers map[string]json.RawMessage `json:"servers"`
		}
		data, err := os.ReadFile(path)
		if err == nil && json.Unmarshal(data, &f) == nil {
			all := true
			for _, n := range names {
				if _, ok := f.Servers[n]; !ok {
					all = false
				}
			}
			if all {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("cache %s never got entries for %v (have %s)", path, names, data)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// daemon is a running `mcpgw serve` under test.
type Daemon struct {
	URL    string // http://127.0.0.1:P
	Dir    string // its private temp dir (HOME, cache, socket)
	Socket string
	Cache  string
	Proc   *Process
}

// mcpURL is the daemon's MCP endpoint.
func (d *Daemon) MCPURL() string { return d.URL + "/mcp" }

// writeConfig writes an mcp.json with the given servers into dir.
func WriteConfig(t testing.TB, dir string, servers map[string]any, settings map[string]any) string {
	t.Helper()
	cfg := map[string]any{"mcpServers": servers, "settings": withTestDiscovery(settings)}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// withTestDiscovery returns settings with discoveryTimeoutMs at WaitLimit
// unless they set it: how long a list or a call waits for a server being
// started and discovered. The product's 10 s is a user's bound; a machine
// busy with other tests can take longer to start a server built with
// -race, and a test then sees an answer it did not ask about.
func withTestDiscovery(settings map[string]any) map[string]any {
	if _, set := settings["discoveryTimeoutMs"]; set {
		return settings
	}
	out := map[string]any{"discoveryTimeoutMs": WaitLimit.Milliseconds()}
	maps.Copy(out, settings)
	return out
}

// startDaemon runs the mcpgw binary with config in dir, HOME pointed at dir
// so nothing outside the test is read or written, and waits until it serves.
func StartDaemon(t testing.TB, dir, config string, extra ...string) *Daemon {
	t.Helper()
	bin := BuildMcpgw(t)
	d := &Daemon{
		Dir:    dir,
		Socket: filepath.Join(dir, "run", "mcpgw.sock"),
		Cache:  filepath.Join(dir, "cache.json"),
	}
	d.Proc, d.URL = Serve(t, d.Socket, func(listen string) *exec.Cmd {
		args := append([]string{"serve", "--config", config, "--listen", listen,
			"--cache", d.Cache, "--socket", d.Socket, "--log-format", "text", "--log-level", "debug"}, extra...)
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
			"XDG_RUNTIME_DIR="+filepath.Join(dir, "run"), "XDG_STATE_HOME="+filepath.Join(dir, "state"))
		return cmd
	})
	return d
}

// Serve starts the `mcpgw serve` that cmdAt gives for the listen address
// 127.0.0.1:P, on a port P it picks, and waits until the daemon answers on
// its unix socket sock. It returns the process and the daemon's base URL.
//
// The daemon binds its TCP port before it serves either, so an answer on
// the socket means the port is the daemon's. A port the test picked can be
// taken by another process before the daemon binds it; the daemon then
// exits, and is started again on another port. Waiting at the port instead
// would take that process's answer for the daemon's.
func Serve(t testing.TB, sock string, cmdAt func(listen string) *exec.Cmd) (*Process, string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		listen := fmt.Sprintf("127.0.0.1:%d", pickPort(t))
		p := StartProcess(t, cmdAt(listen))
		err := waitSocket(sock, p)
		if err == nil {
			return p, "http://" + listen
		}
		if attempt == 3 || !strings.Contains(p.Output.String(), "address already in use") {
			t.Fatalf("starting mcpgw: %v; its output:\n%s", err, p.Output.String())
		}
		t.Logf("%s was taken before mcpgw bound it; trying another port", listen)
	}
}

// pickPort picks the ports of the processes the harness starts (Serve,
// StartEverything); a test of the harness replaces it.
var pickPort = FreePort

// waitSocket waits up to WaitLimit for the daemon p to answer as mcpgw on
// its unix socket sock.
func waitSocket(sock string, p *Process) error {
	deadline := time.Now().Add(WaitLimit)
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		up := (&control.Control{Socket: sock}).ViaSocket(ctx)
		cancel()
		if up {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer on %s after %v", sock, WaitLimit)
		}
		select {
		case <-p.Exited:
			return fmt.Errorf("it exited before serving: %v", p.Err)
		case <-time.After(delay):
		}
	}
}

func (d *Daemon) Report(t testing.TB) *api.Report {
	t.Helper()
	return DaemonStatus(t, d.URL)
}

// waitReload waits for a reload attempt recorded after since.
func (d *Daemon) WaitReload(t testing.TB, since time.Time) *api.ReloadInfo {
	t.Helper()
	var info *api.ReloadInfo
	PollUntil(t, "a config reload", func() bool {
		info = d.Report(t).LastReload
		return info != nil && info.At.After(since)
	})
	return info
}

func (d *Daemon) MetricValue(t testing.TB, name string) string {
	t.Helper()
	resp, err := http.Get(d.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	return ""
}

// daemonStatus is GET /-/status of the daemon at base.
func DaemonStatus(t testing.TB, base string) *api.Report {
	t.Helper()
	return DaemonStatusAs(t, base, "")
}

// DaemonStatusAs is DaemonStatus asked with token as a bearer token (a
// team daemon's user); "" sends none.
func DaemonStatusAs(t testing.TB, base, token string) *api.Report {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/-/status", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /-/status: %v", err)
	}
	defer resp.Body.Close()
	var r api.Report
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("decoding /-/status: %v", err)
	}
	return &r
}

// StopDaemonAt ends a daemon the test did not start itself (one a shim
// started), found by its status endpoint at base.
func StopDaemonAt(t *testing.T, base string) {
	stopDaemon(&control.Control{URL: base})
}

// StopDaemonOn is StopDaemonAt for the daemon serving the unix socket
// sock: a daemon a shim started always serves its socket, while its TCP
// port may have been taken by another program before it bound it.
func StopDaemonOn(t *testing.T, sock string) {
	stopDaemon(&control.Control{Socket: sock})
}

// stopDaemon sends SIGTERM to the daemon ctl reaches, as the CLI reaches
// one (a program that is not mcpgw is left alone), and SIGKILL if it is
// still alive after WaitLimit. Finding it is bounded: another program may
// hold the port and never answer.
func stopDaemon(ctl *control.Control) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body, err := ctl.Status(ctx)
	if err != nil {
		return
	}
	var r api.Report
	if json.Unmarshal(body, &r) != nil || r.PID <= 0 {
		return
	}
	_ = syscall.Kill(r.PID, syscall.SIGTERM)
	deadline := time.Now().Add(WaitLimit)
	for proctest.Alive(r.PID) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if proctest.Alive(r.PID) {
		_ = syscall.Kill(r.PID, syscall.SIGKILL)
	}
}

func WriteJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, _ := json.MarshalIndent(v, "", "  ")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// policyServer is the test server with its policy tools (delete_thing
// counts the calls that reach it), plus extra fields.
func PolicyServer(extra map[string]any) map[string]any {
	s := map[string]any{"command": TestServerBin, "args": []string{"testserver"},
		"env": map[string]any{fakeupstream.EnvPolicy: "1"}}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

// waitPending polls the daemon until a call of tool waits for approval,
// and returns it.
func WaitPending(t *testing.T, d *Daemon, tool string) api.PendingApproval {
	t.Helper()
	var found api.PendingApproval
	PollUntil(t, "a pending approval of "+tool, func() bool {
		for _, p := range d.Report(t).Approvals {
			if p.Tool == tool {
				found = p
				return true
			}
		}
		return false
	})
	return found
}
