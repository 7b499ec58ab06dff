//go:build linux

package upstream

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/proctest"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// runPoolHelper runs in a helper process (the test binary re-executed): it
// starts a pool, connects a test server, makes it spawn a grandchild, prints
// "server=PID grandchild=PID reaper=PID" and waits to be killed.
func runPoolHelper() {
	os.Unsetenv(testMode) // the servers it starts are this binary too
	p := New(nil)
	srv := fakeupstream.Server("child", nil)
	u := p.Upstream(srv)
	res, err := u.Call(context.Background(), "pid", nil, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	server := resultText(res)
	res, err = u.Call(context.Background(), "spawn", nil, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	grandchild := resultText(res)
	res, err = u.Call(context.Background(), "spawn", map[string]any{"setsid": true}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	time.Sleep(3 * trackInterval) // the reaper notes descendants once per interval
	fmt.Printf("server=%s grandchild=%s escaped=%s reaper=%d\n", server, grandchild, resultText(res), p.reaper.pid())
	select {}
}

// TestKilledDaemonLeavesNoProcess kills -9 a process running a Pool whose
// upstream has a child of its own, and checks that the upstream's whole
// process group dies with it (parent-death signal for the server, the
// reaper for the grandchild), that a grandchild in a session of its own
// (setsid) dies too, and that the reaper then exits.
func TestKilledDaemonLeavesNoProcess(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), testMode+"=poolhelper")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the helper's PIDs: %v", err)
	}
	var server, grandchild, escaped, reaper int
	if _, err := fmt.Sscanf(strings.TrimSpace(line), "server=%d grandchild=%d escaped=%d reaper=%d", &server, &grandchild, &escaped, &reaper); err != nil {
		t.Fatalf("helper said %q: %v", line, err)
	}
	for _, pid := range []int{server, grandchild, escaped, reaper} {
		if !proctest.Alive(pid) {
			t.Fatalf("process %d not running before the kill (line %q)", pid, line)
		}
	}
	if g := pgid(t, grandchild); g != server {
		t.Fatalf("grandchild's process group = %d, want the server's %d", g, server)
	}

	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup code runs
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed = true
	waitGone(t, server, grandchild, escaped, reaper)
	if left := groupMembers(server); len(left) > 0 {
		t.Errorf("process group %d still has %v", server, left)
	}
}

// pgid returns pid's process group from /proc.
func pgid(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	return atoi(t, fields[2]) // state ppid pgrp
}

// groupMembers lists live processes in process group g.
func groupMembers(g int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+2:])
		if len(f) > 2 && f[2] == fmt.Sprint(g) && f[0] != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// A grandchild that left its server's process group (setsid) is killed
// when the server is closed, as the rest of the group is.
func TestClosedServerLeavesNoEscapedGrandchild(t *testing.T) {
	t.Parallel()
	p := New(nil)
	defer p.Close()
	srv, _ := testServer(t, "escaper", nil)
	u := p.Upstream(srv)
	res, err := u.Call(context.Background(), "spawn", map[string]any{"setsid": true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscanf(resultText(res), "%d", &pid); err != nil || !proctest.Alive(pid) {
		t.Fatalf("spawn said %q", resultText(res))
	}
	time.Sleep(3 * trackInterval) // the reaper notes descendants once per interval
	p.Reconcile(nil)              // the server leaves the config: its process ends
	waitGone(t, pid)
}
