//go:build linux

package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestTokenNotInArguments: a token given on the command line, which every
// local user can read in /proc/PID/cmdline, is refused by the daemon and
// the CLI alike, with where to put it instead.
func TestTokenNotInArguments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"serve", "--stdio", "--token", "s3cr3t", "--config", filepath.Join(dir, "mcp.json")},
		{"serve", "--stdio", "--token=s3cr3t", "--config", filepath.Join(dir, "mcp.json")},
		{"status", "--token", "s3cr3t", "--url", "http://127.0.0.1:1"},
		{"approve", "--list", "--token", "s3cr3t", "--url", "http://127.0.0.1:1"},
	} {
		_, stderr, err := runCmd(t, args...)
		if err == nil || !strings.Contains(err.Error(), "readable by every local user") || !strings.Contains(err.Error(), "--token-file FILE") || !strings.Contains(err.Error(), "$MCPGW_TOKEN") {
			t.Errorf("mcpgw %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		if strings.Contains(stderr, "s3cr3t") {
			t.Errorf("mcpgw %s prints the token:\n%s", strings.Join(args, " "), stderr)
		}
	}
}

// TestServeTokenFile: serve reads its token from --token-file (first line,
// space trimmed) in preference to $MCPGW_TOKEN; an empty file is an error.
func TestServeTokenFile(t *testing.T) {
	t.Setenv("MCPGW_TOKEN", "from-env")
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	os.WriteFile(file, []byte("  from-file\n"), 0o600)
	f, err := parseServeFlags([]string{"--token-file", file}, io.Discard)
	if err != nil || f.token != "from-file" {
		t.Errorf("--token-file: %q, %v", f.token, err)
	}
	if f, err = parseServeFlags(nil, io.Discard); err != nil || f.token != "from-env" {
		t.Errorf("$MCPGW_TOKEN: %q, %v", f.token, err)
	}
	os.WriteFile(file, []byte("\n"), 0o600)
	if _, err := parseServeFlags([]string{"--token-file", file}, io.Discard); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("an empty token file: %v", err)
	}
}

// cliEnv is the environment of a CLI command run against a test daemon in
// dir, with extra variables.
func cliEnv(dir string, extra ...string) []string {
	return append(os.Environ(), append([]string{"MCPGW_TOKEN=", "HOME=" + dir, "XDG_STATE_HOME=" + filepath.Join(dir, "state")}, extra...)...)
}

// getAs is the status code of GET url as uid (curl under that account),
// with the bearer token if not "".
func getAs(t *testing.T, uid uint32, url, bearer string) string {
	t.Helper()
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl not found")
	}
	args := []string{"-s", "-o", "/dev/null", "-w", "%{http_code}", url}
	if bearer != "" {
		args = append(args, "-H", "Authorization: Bearer "+bearer)
	}
	cmd := exec.Command(curl, args...)
	if uid != uint32(os.Getuid()) {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("curl as uid %d: %v", uid, err)
	}
	return strings.TrimSpace(string(out))
}

// startDaemonEnv starts a daemon in dir, as startDaemonProc does, with the
// environment cliEnv gives, and returns its URL.
func startDaemonEnv(t *testing.T, dir string, env []string, extra ...string) string {
	t.Helper()
	bin := e2e.BuildMcpgw(t)
	config := e2e.WriteConfig(t, dir, map[string]any{}, nil)
	sock := filepath.Join(dir, "run", "mcpgw.sock")
	_, url := e2e.Serve(t, sock, func(listen string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"serve", "--config", config, "--listen", listen,
			"--cache", filepath.Join(dir, "cache.json"), "--socket", sock, "--no-bootstrap"}, extra...)...)
		cmd.Env = cliEnv(dir, append([]string{"XDG_RUNTIME_DIR=" + filepath.Join(dir, "run")}, env...)...)
		return cmd
	})
	return url
}

// TestTokenIsASecondLock: a daemon with a token refuses another local
// user who presents it, and its owner who does not; the CLI finds the
// token in --token-file or $MCPGW_TOKEN.
func TestTokenIsASecondLock(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to connect as another user")
	}
	t.Parallel()
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("file-t0ken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := struct{ url string }{startDaemonEnv(t, dir, []string{"MCPGW_TOKEN=file-t0ken"})}
	for _, tc := range []struct {
		uid    uint32
		path   string
		bearer string
		want   string
	}{
		{65534, "/-/status", "file-t0ken", "403"},
		{65534, "/mcp", "file-t0ken", "403"},
		{0, "/-/status", "", "401"},
		{0, "/-/status", "guess", "401"},
		{0, "/-/status", "file-t0ken", "200"},
		{65534, "/healthz", "", "200"},
	} {
		if got := getAs(t, tc.uid, d.url+tc.path, tc.bearer); got != tc.want {
			t.Errorf("uid %d GET %s with token %q: %s, want %s", tc.uid, tc.path, tc.bearer, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		ok   bool
	}{
		{"--token-file", []string{"status", "--url", d.url, "--token-file", tokenFile}, nil, true},
		{"$MCPGW_TOKEN", []string{"status", "--url", d.url}, []string{"MCPGW_TOKEN=file-t0ken"}, true},
		{"no token", []string{"status", "--url", d.url}, nil, false},
	} {
		cmd := exec.Command(bin, tc.args...)
		cmd.Env = cliEnv(dir, tc.env...)
		out, err := cmd.CombinedOutput()
		if ok := err == nil && strings.Contains(string(out), "mcpgw "); ok != tc.ok {
			t.Errorf("mcpgw status with %s: %v\n%s", tc.name, err, out)
		}
	}
}

// TestInstallToken: where the daemon cannot tell which user connects (as
// on macOS; a test switch makes Linux act so), a daemon with no token of
// its own makes the install token, a 0600 file in the state directory,
// and requires it on HTTP; the CLI reads it from there.
func TestInstallToken(t *testing.T) {
	t.Parallel()
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	url := startDaemonEnv(t, dir, []string{"MCPGW_TEST_NO_OWNER_CHECK=1"})

	tokenPath := filepath.Join(dir, "state", "mcpgw", "token")
	fi, err := os.Stat(tokenPath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the install token's file: %v, %v", fi, err)
	}
	data, _ := os.ReadFile(tokenPath)
	token := strings.TrimSpace(string(data))
	if len(token) != 64 {
		t.Fatalf("install token %q, want 256 bits in hex", token)
	}
	for _, tc := range []struct{ bearer, want string }{{"", "401"}, {"guess", "401"}, {token, "200"}} {
		req, _ := http.NewRequest(http.MethodGet, url+"/-/status", nil)
		if tc.bearer != "" {
			req.Header.Set("Authorization", "Bearer "+tc.bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := fmt.Sprint(resp.StatusCode); got != tc.want {
			t.Errorf("GET /-/status with token %q: %s, want %s", tc.bearer, got, tc.want)
		}
	}
	status := exec.Command(bin, "status", "--url", url)
	status.Env = cliEnv(dir)
	if out, err := status.CombinedOutput(); err != nil || !strings.Contains(string(out), "mcpgw ") {
		t.Errorf("mcpgw status with the install token: %v\n%s", err, out)
	}
}
