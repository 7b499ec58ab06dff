package runloop

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// memListener is a net.Listener of in-memory connections (net.Pipe):
// dial queues one for Accept, fail queues an error.
type memListener struct {
	conns  chan net.Conn
	errs   chan error
	closed chan struct{}
	once   sync.Once
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn, 16), errs: make(chan error, 1), closed: make(chan struct{})}
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case <-l.closed: // as a net.Listener: closed is closed, whatever is queued
		return nil, net.ErrClosed
	default:
	}
	select {
	case c := <-l.conns:
		return c, nil
	case err := <-l.errs:
		return nil, err
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *memListener) Addr() net.Addr { return &net.UnixAddr{Name: "mem", Net: "unix"} }

// dial queues a connection for Accept and returns the client's end.
func (l *memListener) dial(t *testing.T) net.Conn {
	client, server := net.Pipe()
	l.conns <- server
	t.Cleanup(func() { client.Close() })
	return client
}

// accept accepts the next connection and puts it in state st, as the
// HTTP server would.
func accept(t *testing.T, ln *limitedListener, st http.ConnState) net.Conn {
	t.Helper()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	connState(c, st)
	return c
}

// isClosed says whether c (the listener's end of a pipe) has been closed,
// without blocking: a write past its deadline fails one way on an open
// pipe and another on a closed one.
func isClosed(t *testing.T, c net.Conn) bool {
	t.Helper()
	c.SetWriteDeadline(time.Now().Add(-time.Second))
	_, err := c.Write([]byte("x"))
	switch {
	case errors.Is(err, io.ErrClosedPipe):
		return true
	case errors.Is(err, os.ErrDeadlineExceeded):
		return false
	}
	t.Fatalf("write: %v", err)
	return false
}

// acceptAsync runs Accept in a goroutine; its result arrives on the
// channel returned.
func acceptAsync(ln *limitedListener) <-chan error {
	ch := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if c != nil {
			defer c.Close()
		}
		ch <- err
	}()
	return ch
}

// At the limit with every connection in a request, Accept waits, and
// takes the next connection once one of them ends.
func TestLimitListenerWaitsAtTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := newMemListener()
		ln := limitListener(inner, 1)
		defer ln.Close()
		inner.dial(t)
		inner.dial(t)
		first := accept(t, ln, http.StateActive) // in a request: not evicted
		second := acceptAsync(ln)
		synctest.Wait()
		select {
		case err := <-second:
			t.Fatalf("a second connection was accepted (err %v) while the first was in a request", err)
		default:
		}
		if isClosed(t, first) {
			t.Fatal("the connection in a request was closed to make room")
		}
		first.Close()
		synctest.Wait()
		select {
		case err := <-second:
			if err != nil {
				t.Fatalf("Accept after the first closed: %v", err)
			}
		default:
			t.Fatal("the second connection was not accepted after the first closed")
		}
	})
}

// At the limit, the connection that has waited longest without being in a
// request (new, or idle between requests) makes room for a new one:
// stalled clients cannot lock others out. One in a request is never
// closed for it.
func TestLimitListenerEvictsStalled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := newMemListener()
		ln := limitListener(inner, 3)
		defer ln.Close()
		for range 5 {
			inner.dial(t)
		}
		busy := accept(t, ln, http.StateActive)
		time.Sleep(time.Second)
		idle := accept(t, ln, http.StateIdle)
		time.Sleep(time.Second)
		stalled := accept(t, ln, http.StateNew)
		time.Sleep(time.Second)

		accept(t, ln, http.StateActive) // over the limit: the oldest not in a request goes
		if !isClosed(t, idle) {
			t.Error("the connection idle longest is still open")
		}
		if isClosed(t, stalled) || isClosed(t, busy) {
			t.Error("a younger stalled connection, or one in a request, was closed")
		}
		accept(t, ln, http.StateActive) // then the next oldest
		if !isClosed(t, stalled) {
			t.Error("the stalled connection is still open")
		}
		if isClosed(t, busy) {
			t.Error("the connection in a request was closed")
		}
	})
}

// Close wakes an Accept waiting for a slot; Accept after Close fails; Close
// is safe twice.
func TestLimitListenerClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := newMemListener()
		ln := limitListener(inner, 1)
		inner.dial(t)
		inner.dial(t)
		held := accept(t, ln, http.StateActive)
		waiting := acceptAsync(ln)
		synctest.Wait()
		if err := ln.Close(); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		select {
		case err := <-waiting:
			if !errors.Is(err, net.ErrClosed) {
				t.Errorf("the waiting Accept returned %v, want net.ErrClosed", err)
			}
		default:
			t.Fatal("Close did not wake a waiting Accept")
		}
		held.Close() // a slot is free, but the listener is closed
		if c, err := ln.Accept(); err == nil {
			c.Close()
			t.Error("Accept after Close succeeded")
		}
		if err := ln.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

// A connection closed twice frees one slot, not two; an Accept of the
// inner listener that fails frees the slot it took.
func TestLimitListenerSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := newMemListener()
		ln := limitListener(inner, 2)
		defer ln.Close()
		for range 4 { // one more than will be accepted: only the limit holds it
			inner.dial(t)
		}
		a := accept(t, ln, http.StateActive)
		accept(t, ln, http.StateActive)
		a.Close()
		a.Close()
		accept(t, ln, http.StateActive) // a's slot
		over := acceptAsync(ln)
		synctest.Wait()
		select {
		case err := <-over:
			t.Fatalf("a third connection was accepted (err %v) with two in requests and a limit of 2", err)
		default:
		}
		ln.Close()
		<-over

		inner = newMemListener()
		ln = limitListener(inner, 1)
		defer ln.Close()
		inner.errs <- errors.New("accept failed")
		if _, err := ln.Accept(); err == nil || err.Error() != "accept failed" {
			t.Fatalf("Accept = %v, want the inner listener's error", err)
		}
		inner.dial(t)
		next := acceptAsync(ln)
		synctest.Wait()
		select {
		case err := <-next:
			if err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatal("the failed Accept kept its slot")
		}
	})
}
