//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestDaemonTokenUnreachable: the daemon's token (MCPGW_TOKEN in its
// environment) reaches no upstream, neither through ${...} in a config
// nor by reading the daemon's /proc/PID/environ, while its
// /proc/PID/status stays readable for whoever watches its memory. The
// reader is a secret command ("!cmd"), a child of the daemon running as
// its user, like any upstream.
func TestDaemonTokenUnreachable(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	const token = "s3cret-token-4711"
	config := e2e.WriteConfig(t, dir, map[string]any{
		"leak": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}, "env": map[string]any{
			"FROM_BRACES": "${MCPGW_TOKEN}",
			"FROM_DOLLAR": "x$env:MCPGW_TOKEN",
			"FROM_CMD":    "!echo ${MCPGW_TOKEN:-none}",
			"PEEK":        `!cat /proc/$PPID/environ 2>&1 | tr '\0' '\n' | grep MCPGW_TOKEN || echo unreadable`,
			"STATUS":      "!grep -c VmRSS /proc/$PPID/status",
		}},
	}, nil)
	d := &e2e.Daemon{Dir: dir, Socket: filepath.Join(dir, "run", "mcpgw.sock")}
	d.Proc, d.URL = e2e.Serve(t, d.Socket, func(listen string) *exec.Cmd {
		args := []string{bin, "serve", "--config", config, "--listen", listen,
			"--cache", filepath.Join(dir, "cache.json"), "--socket", d.Socket, "--no-bootstrap"}
		if os.Geteuid() == 0 {
			// Root reads every process's /proc files; the daemon and its
			// children run as root without capabilities instead, as a user's
			// daemon does.
			setpriv, err := exec.LookPath("setpriv")
			if err != nil {
				t.Skip("running as root without setpriv to drop capabilities")
			}
			args = append([]string{setpriv, "--bounding-set=-all", "--inh-caps=-all", "--"}, args...)
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_STATE_HOME="+filepath.Join(dir, "state"),
			"XDG_RUNTIME_DIR="+filepath.Join(dir, "run"), "MCPGW_TOKEN="+token)
		return cmd
	})

	target := e2e.Target{URL: d.MCPURL(), Headers: map[string]string{"Authorization": "Bearer " + token}}
	env := func(name string) e2e.Step {
		return e2e.MCPCall(map[string]any{"tool": "leak_env", "args": map[string]any{"name": name}})
	}
	r := e2e.RunClient(t, target, []e2e.Step{env("FROM_BRACES"), env("FROM_DOLLAR"), env("FROM_CMD"), env("PEEK"), env("STATUS")})
	for i, want := range []string{"", "x", "none", "unreadable", "1"} {
		if got := r[i].Text(); r[i].IsError() || got != want {
			t.Errorf("step %d: the upstream read %q (isError %v), want %q", i, got, r[i].IsError(), want)
		}
		if strings.Contains(r[i].Text(), token) {
			t.Errorf("step %d: the upstream got the daemon's token", i)
		}
	}
}
