// Package redistest starts a real redis-server for tests (the Debian
// package's binary, on a free port, in a temporary directory, with no
// persistence), for team mode's shared store. Only tests import it.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Server is a redis-server started by Start.
type Server struct {
	URL  string // redis://127.0.0.1:PORT/0
	Addr string // 127.0.0.1:PORT
	cmd  *exec.Cmd
	done chan struct{}
}

// Binary is the redis-server the tests run; Start skips the test, saying
// so, when it is not installed.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed (apt-get install redis-server): the team store's tests need a real one")
	}
	return bin
}

// Start runs a redis-server until the test ends, and returns once it
// accepts connections.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	var lastErr error
	for range 5 { // a free port may be taken between finding it and binding it
		s, err := start(bin, dir, freePort(t))
		if err == nil {
			t.Cleanup(s.Stop)
			return s
		}
		lastErr = err
	}
	t.Fatalf("starting redis-server: %v", lastErr)
	return nil
}

// StartAt runs a redis-server on addr's port (one a Server was given and
// stopped), until the test ends.
func StartAt(t testing.TB, addr string) *Server {
	t.Helper()
	_, port, _ := net.SplitHostPort(addr)
	var p int
	fmt.Sscan(port, &p)
	s, err := start(Binary(t), t.TempDir(), p)
	if err != nil {
		t.Fatalf("starting redis-server again at %s: %v", addr, err)
	}
	t.Cleanup(s.Stop)
	return s
}

func start(bin, dir string, port int) (*Server, error) {
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--loglevel", "notice", "--logfile", "")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{URL: "redis://" + addr + "/0", Addr: addr, cmd: cmd, done: make(chan struct{})}
	ready := make(chan struct{})
	var log strings.Builder
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(out)
		said := false
		for sc.Scan() {
			if !said {
				log.WriteString(sc.Text() + "\n")
			}
			if !said && strings.Contains(sc.Text(), "Ready to accept connections") {
				said = true
				close(ready)
			}
		}
		_ = cmd.Wait()
	}()
	select {
	case <-ready:
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("redis-server on port %d exited:\n%s", port, log.String())
	case <-time.After(30 * time.Second):
		s.Stop()
		return nil, fmt.Errorf("redis-server on port %d: not ready after 30s:\n%s", port, log.String())
	}
}

// Stop kills the server and waits for it; safe to call twice.
func (s *Server) Stop() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
