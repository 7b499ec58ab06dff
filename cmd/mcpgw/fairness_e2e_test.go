package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestRunawayScriptLeavesOthersTheirTurn: a daemon on one CPU (as it
// settles) runs a script that spins after a tool call, and another
// session's call is answered while the script still runs, not once its
// deadline ends it. The daemon's reads and writes are raw system calls
// (internal/rawio), which do not wake the runtime's monitor, the thread
// that preempts a goroutine holding the CPU; the script wakes it.
func TestRunawayScriptLeavesOthersTheirTurn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{"p": e2e.PolicyServer(nil)}, nil)
	bin := e2e.BuildMcpgw(t)
	sock := filepath.Join(dir, "run", "mcpgw.sock")
	_, url := e2e.Serve(t, sock, func(listen string) *exec.Cmd {
		cmd := exec.Command(bin, "serve", "--config", config, "--listen", listen,
			"--cache", filepath.Join(dir, "cache.json"), "--socket", sock, "--log-format", "text")
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
			"XDG_RUNTIME_DIR="+filepath.Join(dir, "run"), "XDG_STATE_HOME="+filepath.Join(dir, "state"))
		return cmd
	})
	e2e.WaitCached(t, filepath.Join(dir, "cache.json"), "p")

	script := exec.Command(bin, "script", "--url", url, "--timeout", "20s", "-e",
		`await tools.call("p_echo", {message: "before the spin"}); while (true) {}`)
	out := &strings.Builder{}
	script.Stdout, script.Stderr = out, out
	if err := script.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() { script.Wait(); close(ended) }()
	t.Cleanup(func() { script.Process.Kill(); <-ended })

	// The script's call is counted once answered; the script spins
	// from then on.
	e2e.PollUntil(t, "the script's call", func() bool { return echoCalls(t, url) > 0 })

	call, err := exec.Command(bin, "call", "--url", url, "p_echo", `{"message":"meanwhile"}`).CombinedOutput()
	if err != nil || !strings.Contains(string(call), "meanwhile") {
		t.Fatalf("mcpgw call while the script spins: %v\n%s", err, call)
	}
	select {
	case <-ended:
		t.Fatalf("the call was answered only once the script had ended:\n%s", out)
	default:
	}
}

// echoCalls is how many calls to server p the daemon at url has counted
// answered.
func echoCalls(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), `mcpgw_tool_calls_total{outcome="ok",server="p"} `); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}
