package rawio

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// pairs returns connected ends of each kind rawio wraps, the first of
// each pair wrapped: TCP on loopback, a unix socket, and a pipe (read end
// wrapped in r, write end in w).
type pair struct {
	name string
	a    io.ReadWriter // wrapped
	b    io.ReadWriter // plain
	// closeA closes a's descriptor; setDeadline sets its read deadline.
	closeA      func() error
	closeB      func() error
	setDeadline func(time.Time) error
	// bDeadline sets b's read deadline.
	bDeadline func(time.Time) error
}

func tcpPair(t *testing.T) pair {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return connPair(t, "tcp", ln)
}

func unixPair(t *testing.T) pair {
	t.Helper()
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return connPair(t, "unix", ln)
}

func connPair(t *testing.T, name string, ln net.Listener) pair {
	t.Helper()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c
	}()
	b, err := net.Dial(ln.Addr().Network(), ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := <-accepted
	if c == nil {
		t.Fatal("accept failed")
	}
	a := Conn(c)
	if a == c {
		t.Fatalf("Conn(%T) was not wrapped", c)
	}
	t.Cleanup(func() { c.Close(); b.Close() })
	return pair{name: name, a: a, b: b, closeA: c.Close, closeB: b.Close, setDeadline: a.SetReadDeadline, bDeadline: b.SetReadDeadline}
}

// pipePairs returns two pipes: one whose read end is wrapped (a reads,
// b writes) and one whose write end is (a writes, b reads).
func pipePair(t *testing.T) pair {
	t.Helper()
	r1, w1, err := os.Pipe() // a reads r1 (wrapped), b writes w1
	if err != nil {
		t.Fatal(err)
	}
	r2, w2, err := os.Pipe() // a writes w2 (wrapped), b reads r2
	if err != nil {
		t.Fatal(err)
	}
	ra, wa := File(r1), File(w2)
	if _, ok := ra.(*file); !ok {
		t.Fatalf("File(pipe) = %T, want the raw file", ra)
	}
	t.Cleanup(func() { r1.Close(); w1.Close(); r2.Close(); w2.Close() })
	return pair{
		name: "pipe",
		a: struct {
			io.Reader
			io.Writer
		}{ra, wa},
		b: struct {
			io.Reader
			io.Writer
		}{r2, w1},
		closeA:      func() error { w2.Close(); return r1.Close() },
		closeB:      func() error { r2.Close(); return w1.Close() },
		setDeadline: r1.SetReadDeadline,
		bDeadline:   r2.SetReadDeadline,
	}
}

func allPairs(t *testing.T) []pair { return []pair{tcpPair(t), unixPair(t), pipePair(t)} }

// TestRelaysEveryByte sends 8 MiB each way at once, far more than a
// socket's or a pipe's buffer: the raw writes end short and wait, the raw
// reads find nothing and wait, many times over.
func TestRelaysEveryByte(t *testing.T) {
	for _, p := range allPairs(t) {
		t.Run(p.name, func(t *testing.T) {
			toA, toB := make([]byte, 8<<20), make([]byte, 8<<20)
			rand.Read(toA)
			rand.Read(toB)
			// A write that ends short would leave a read waiting: the
			// deadlines make that a failure, not a hang.
			p.setDeadline(time.Now().Add(time.Minute))
			p.bDeadline(time.Now().Add(time.Minute))
			errs := make(chan error, 2)
			write := func(w io.Writer, b []byte) {
				n, err := w.Write(b)
				if err == nil && n != len(b) {
					err = fmt.Errorf("wrote %d of %d bytes and no error", n, len(b))
				}
				errs <- err
			}
			go write(p.a, toB)
			go write(p.b, toA)
			gotA := make([]byte, len(toA))
			gotB := make([]byte, len(toB))
			readErr := make(chan error, 1)
			go func() {
				_, err := io.ReadFull(p.b, gotB)
				readErr <- err
			}()
			// Small reads on the wrapped side: many of them find the
			// buffer empty.
			for n := 0; n < len(gotA); {
				m, err := p.a.Read(gotA[n:min(n+1000, len(gotA))])
				if err != nil {
					t.Fatalf("read after %d bytes: %v", n, err)
				}
				n += m
			}
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatalf("write: %v", err)
				}
			}
			if err := <-readErr; err != nil {
				t.Fatalf("plain read: %v", err)
			}
			if !bytes.Equal(gotA, toA) {
				t.Error("the wrapped end read other bytes than were sent")
			}
			if !bytes.Equal(gotB, toB) {
				t.Error("the wrapped end wrote other bytes than it was given")
			}
		})
	}
}

// TestEndOfInput: the peer's close is io.EOF itself (bufio and net/http
// compare with it), after the bytes it sent; an empty read is 0, nil.
func TestEndOfInput(t *testing.T) {
	for _, p := range allPairs(t) {
		t.Run(p.name, func(t *testing.T) {
			if n, err := p.a.Read(nil); n != 0 || err != nil {
				t.Fatalf("empty read = %d, %v; want 0, nil", n, err)
			}
			if _, err := p.b.Write([]byte("last")); err != nil {
				t.Fatal(err)
			}
			p.closeB()
			got := make([]byte, 8)
			n, err := p.a.Read(got)
			if err != nil || string(got[:n]) != "last" {
				t.Fatalf("read = %q, %v; want \"last\", nil", got[:n], err)
			}
			n, err = p.a.Read(got)
			if n != 0 || err != io.EOF {
				t.Fatalf("read after the end = %d, %v; want 0, io.EOF", n, err)
			}
		})
	}
}

// TestDeadlineEndsRead: the descriptor's read deadline ends a raw read
// waiting on the poller, with the error the plain one gives.
func TestDeadlineEndsRead(t *testing.T) {
	for _, p := range allPairs(t) {
		t.Run(p.name, func(t *testing.T) {
			p.setDeadline(time.Now().Add(20 * time.Millisecond))
			_, err := p.a.Read(make([]byte, 8))
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("read past the deadline: %v, want os.ErrDeadlineExceeded", err)
			}
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("read past the deadline: %v is not a net.Error with Timeout", err)
			}
			checkErrType(t, p.name, err, "read")
			// The deadline lifted, the read goes on as before.
			p.setDeadline(time.Time{})
			if _, err := p.b.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 8)
			if n, err := p.a.Read(b); n != 1 || err != nil || b[0] != 'x' {
				t.Fatalf("read after the deadline was lifted = %d, %v", n, err)
			}
		})
	}
}

// checkErrType: a connection's errors are *net.OpError, a file's
// *os.PathError, with op, as the plain ones are.
func checkErrType(t *testing.T, name string, err error, op string) {
	t.Helper()
	if name == "pipe" {
		var pe *os.PathError
		if !errors.As(err, &pe) || pe.Op != op {
			t.Fatalf("%v (%T): want an *os.PathError for %q", err, err, op)
		}
		return
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != op || oe.Net != name {
		t.Fatalf("%v (%T): want a *net.OpError for %q on %s", err, err, op, name)
	}
}

// TestCloseEndsRead: closing the descriptor ends a raw read waiting on
// it, with net.ErrClosed (a connection) or os.ErrClosed (a file).
func TestCloseEndsRead(t *testing.T) {
	for _, p := range allPairs(t) {
		t.Run(p.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, err := p.a.Read(make([]byte, 8))
				done <- err
			}()
			// Closing before the read waits is the same case: the read
			// finds the descriptor closed.
			time.Sleep(10 * time.Millisecond)
			p.closeA()
			err := <-done
			want := net.ErrClosed
			if p.name == "pipe" {
				want = os.ErrClosed
			}
			if !errors.Is(err, want) {
				t.Fatalf("read of a closed descriptor: %v, want %v", err, want)
			}
			checkErrType(t, p.name, err, "read")
		})
	}
}

// TestWriteToGoneReader: a write once the reader has gone fails with the
// kernel's error (EPIPE, or ECONNRESET for a socket), and the process
// goes on (Go's SIGPIPE handling is the same for raw writes).
func TestWriteToGoneReader(t *testing.T) {
	for _, p := range allPairs(t) {
		t.Run(p.name, func(t *testing.T) {
			p.closeB()
			var err error
			for range 100 { // a socket takes a write or two to learn it
				if _, err = p.a.Write(make([]byte, 64<<10)); err != nil {
					break
				}
			}
			if !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("write to a gone reader: %v, want EPIPE or ECONNRESET", err)
			}
			checkErrType(t, p.name, err, "write")
		})
	}
}

// TestWritesDoNotInterleave: writes from several goroutines, each larger
// than a pipe's buffer (so each is many system calls), arrive whole, one
// after another, as *os.File's and net.Conn's do.
func TestWritesDoNotInterleave(t *testing.T) {
	for _, p := range allPairs(t) {
		t.Run(p.name, func(t *testing.T) {
			const writers, size = 4, 200 << 10
			for w := range writers {
				go func() { p.a.Write(bytes.Repeat([]byte{byte('a' + w)}, size)) }()
			}
			got := make([]byte, writers*size)
			p.bDeadline(time.Now().Add(time.Minute)) // a short write fails, not hangs
			if _, err := io.ReadFull(p.b, got); err != nil {
				t.Fatal(err)
			}
			seen := map[byte]bool{}
			for i := 0; i < len(got); i += size {
				rec := got[i : i+size]
				if c := rec[0]; seen[c] || !bytes.Equal(rec, bytes.Repeat([]byte{c}, size)) {
					t.Fatalf("record %d is not one writer's %d bytes", i/size, size)
				}
				seen[rec[0]] = true
			}
		})
	}
}

// TestLeftAsTheyAre: what rawio cannot read raw is returned untouched: a
// connection of another type, a file in blocking mode (a raw read would
// hold the thread), a regular file.
func TestLeftAsTheyAre(t *testing.T) {
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	if got := Conn(c1); got != c1 {
		t.Errorf("Conn(net.Pipe) = %T, want it as it is", got)
	}
	reg, err := os.CreateTemp(t.TempDir(), "f")
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if got, ok := File(reg).(*os.File); !ok || got != reg {
		t.Errorf("File(regular file) = %T, want it as it is", File(reg))
	}
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil { // blocking
		t.Fatal(err)
	}
	blocking := os.NewFile(uintptr(fds[0]), "blocking")
	defer blocking.Close()
	defer syscall.Close(fds[1])
	if got, ok := File(blocking).(*os.File); !ok || got != blocking {
		t.Errorf("File(blocking pipe) = %T, want it as it is", File(blocking))
	}
}

// TestWrappedConnKeepsItsMethods: the wrapper is still what code that
// looks for a descriptor, a half-close or the wrapped connection finds.
func TestWrappedConnKeepsItsMethods(t *testing.T) {
	for _, p := range []pair{tcpPair(t), unixPair(t)} {
		c := p.a.(net.Conn)
		if _, ok := c.(syscall.Conn); !ok {
			t.Errorf("%s: wrapped conn has no SyscallConn", p.name)
		}
		if _, ok := c.(interface{ CloseWrite() error }); !ok {
			t.Errorf("%s: wrapped conn has no CloseWrite", p.name)
		}
		nc, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			t.Fatalf("%s: wrapped conn has no NetConn", p.name)
		}
		switch nc.NetConn().(type) {
		case *net.TCPConn, *net.UnixConn:
		default:
			t.Errorf("%s: NetConn() = %T", p.name, nc.NetConn())
		}
	}
}

// TestWakeMonitorLetsOthersRun: on one P, a goroutine woken by a raw read
// (the runtime's monitor asleep, as in an idle daemon) that then holds
// the CPU in a loop with no preemption point is preempted, once it has
// called WakeMonitor, for a goroutine waiting to run.
func TestWakeMonitorLetsOthersRun(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// Another process writes once this one has been idle a while: every
	// P idle, the monitor goes to sleep.
	writer := exec.Command("sh", "-c", "sleep 0.3; printf x")
	writer.Stdout = w
	if err := writer.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer writer.Wait()
	if n, err := File(r).Read(make([]byte, 1)); n != 1 || err != nil {
		t.Fatalf("read = %d, %v", n, err)
	}
	WakeMonitor()
	var ran atomic.Bool
	go ran.Store(true) // runs only if the loop below is preempted
	start := time.Now()
	for !ran.Load() && time.Since(start) < 10*time.Second {
	}
	if !ran.Load() {
		t.Fatal("a goroutine holding the only P was not preempted in 10 s")
	}
}
