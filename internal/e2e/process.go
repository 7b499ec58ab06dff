//go:build unix

package e2e

import (
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/proctest"
)

// waitLimit bounds every wait for something a working daemon does (a
// process up, a call answered, a notification sent, a file reloaded): the
// waits end on the event, so only a broken daemon reaches the limit. It is
// long because with every CPU busy, and the package's tests running at
// once, starting a process under -race alone can take tens of seconds.
const WaitLimit = 2 * time.Minute

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitHTTP waits up to waitLimit until url answers any HTTP response (a 404
// or 400 counts: the server accepts connections and speaks HTTP).
func WaitHTTP(t testing.TB, url string) {
	t.Helper()
	if err := WaitHTTPOrExit(url, nil, WaitLimit); err != nil {
		t.Fatal(err)
	}
}

// waitHTTPOrExit polls url until it answers, exited is closed, or timeout passes.
func WaitHTTPOrExit(url string, exited <-chan struct{}, timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	delay := 5 * time.Millisecond
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %s: no answer after %v: %w", url, timeout, err)
		}
		select {
		case <-exited:
			return fmt.Errorf("waiting for %s: process exited", url)
		case <-time.After(delay):
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}

// process is a child process in its own process group, started by startProcess.
type Process struct {
	Cmd    *exec.Cmd
	Output *proctest.Buffer // stdout and stderr, interleaved
	Exited chan struct{}    // closed once the process has exited
	Err    error            // Wait's result; read only after exited is closed

	stopOnce sync.Once
}

// startProcess starts cmd in a new process group with stdout and stderr
// captured (unless already set), and ends the group when the test finishes,
// logging the output if the test failed.
func StartProcess(t testing.TB, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{Cmd: cmd, Output: new(proctest.Buffer), Exited: make(chan struct{})}
	if cmd.Stdout == nil {
		cmd.Stdout = p.Output
	}
	if cmd.Stderr == nil {
		cmd.Stderr = p.Output
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cmd, err)
	}
	go func() {
		p.Err = cmd.Wait()
		close(p.Exited)
	}()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("output of %s:\n%s", cmd, p.Output.String())
		}
	})
	return p
}

// stop ends the process group: SIGTERM, up to 5 seconds to exit, then SIGKILL
// (which also reaches any child left in the group). Safe to call twice.
func (p *Process) Stop() {
	p.stopOnce.Do(func() {
		pgid := p.Cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.Exited:
		case <-time.After(5 * time.Second):
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.Exited
	})
}

// pollUntil polls cond until it holds; the deadline only keeps a broken
// daemon from hanging the test.
func PollUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(WaitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: gave up after %v", what, WaitLimit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
