package hangup

import (
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// pair is a connected pair: ours (watched) and the peer's.
func pair(t *testing.T, network string) (ours, peer net.Conn) {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "s")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	peer, err = net.Dial(network, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	ours = <-accepted
	if ours == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { ours.Close(); peer.Close() })
	return ours, peer
}

// watched is a watch and how often it fired.
type watched struct {
	n    atomic.Int32
	done chan struct{}
	stop func()
}

type watchFunc func(net.Conn, bool, func()) func()

func watch(w watchFunc, c net.Conn, data bool) *watched {
	x := &watched{done: make(chan struct{})}
	x.stop = w(c, data, func() {
		if x.n.Add(1) == 1 {
			close(x.done)
		}
	})
	return x
}

func (x *watched) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-x.done:
	case <-time.After(time.Minute):
		t.Fatalf("%s: not seen", what)
	}
}

// wrapped hides a connection's descriptor behind NetConn, as the daemon's
// connection limit does.
type wrapped struct{ net.Conn }

func (w wrapped) NetConn() net.Conn { return w.Conn }

func TestWatch(t *testing.T) {
	impls := map[string]watchFunc{"Watch": Watch, "reading": watchReading}
	for name, w := range impls {
		for _, network := range []string{"tcp", "unix"} {
			t.Run(name+"/"+network, func(t *testing.T) {
				// The peer's close is seen, once.
				a, ap := pair(t, network)
				wa := watch(w, wrapped{a}, false)
				// Data is not an end unless asked: b gets a byte and is
				// still watched after c, which got its byte later, was
				// seen.
				b, bp := pair(t, network)
				wb := watch(w, b, false)
				c, cp := pair(t, network)
				wc := watch(w, c, true)
				// Stopped: d's close is not seen.
				d, dp := pair(t, network)
				wd := watch(w, d, false)
				wd.stop()

				if _, err := bp.Write([]byte("x")); err != nil {
					t.Fatal(err)
				}
				dp.Close()
				if _, err := cp.Write([]byte("y")); err != nil {
					t.Fatal(err)
				}
				wc.wait(t, "c's byte")
				ap.Close()
				wa.wait(t, "a's close")
				if n := wb.n.Load(); n != 0 {
					t.Errorf("b, which got a byte and was not closed, was seen gone %d times", n)
				}
				bp.Close()
				wb.wait(t, "b's close after its byte")
				if n := wd.n.Load(); n != 0 {
					t.Errorf("d, stopped before its close, was seen gone %d times", n)
				}
				// What fired does not fire again.
				cp.Close()
				for _, x := range []*watched{wa, wb, wc} {
					x.stop()
				}
				e, ep := pair(t, network)
				we := watch(w, e, false)
				ep.Close()
				we.wait(t, "e's close")
				for name, x := range map[string]*watched{"a": wa, "b": wb, "c": wc} {
					if n := x.n.Load(); n != 1 {
						t.Errorf("%s seen gone %d times, want once", name, n)
					}
				}
				_ = a
			})
		}
	}
}

// A connection closed on our side, without stop, leaves the watch set: its
// descriptor's number, reused, does not fire the old watch.
func TestWatchSurvivesCloseWithoutStop(t *testing.T) {
	a, _ := pair(t, "tcp")
	wa := watch(Watch, a, false)
	a.Close()
	b, bp := pair(t, "tcp") // likely a's descriptor number again
	wb := watch(Watch, b, false)
	bp.Close()
	wb.wait(t, "b's close")
	if n := wa.n.Load(); n != 0 {
		t.Errorf("a, closed on our side, fired %d times for another connection", n)
	}
	wa.stop()
}
