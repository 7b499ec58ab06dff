//go:build linux

package upstream

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// children counts live child processes of this process.
func children(t testing.TB) int {
	t.Helper()
	me := fmt.Sprint(os.Getpid())
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+2:])
		if len(f) > 1 && f[1] == me && f[0] != "Z" {
			n++
		}
	}
	return n
}

func openFDs(t testing.TB) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// settle polls f until it returns want, or gives up after a generous
// deadline and returns the last value.
func settle(want int, f func() int) int {
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := f()
		if got == want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestConnectIdleCloseCycles connects, calls, and lets the connection
// idle-close, many times over, and checks that processes, file descriptors
// and goroutines return to where they started.
func TestConnectIdleCloseCycles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts hundreds of processes")
	}
	cycles := 1000
	if raceEnabled {
		cycles = 100 // each race-instrumented server start is ~10x slower
	}
	rec := newRecorder()
	p := newPool(t, rec.options(nil))
	srv, _ := testServer(t, "cycle", nil)
	srv.IdleTimeout = time.Millisecond
	u := p.Upstream(srv)

	idles := 0
	cycle := func() {
		call(t, u, "echo", map[string]any{"message": "x"})
		idles++
		rec.waitFor(t, "an idle close", func(states []Status, _ []*Snapshot) bool {
			return len(states) > 0 && states[len(states)-1].IdleCloses == idles && states[len(states)-1].State == StateIdle
		})
	}
	cycle()                                                // warm up: starts the reaper and the spawner thread
	procs0 := settle(1, func() int { return children(t) }) // the reaper
	fds0, gor0 := openFDs(t), runtime.NumGoroutine()

	start := time.Now()
	for range cycles {
		cycle()
	}
	took := time.Since(start)

	procs := settle(procs0, func() int { return children(t) })
	fds := settle(fds0, func() int { return openFDs(t) })
	gor := settle(gor0, runtime.NumGoroutine)
	t.Logf("%d cycles in %v (%v per connect+call+idle close); child processes %d → %d, fds %d → %d, goroutines %d → %d",
		cycles, took.Round(time.Millisecond), (took / time.Duration(cycles)).Round(time.Microsecond), procs0, procs, fds0, fds, gor0, gor)
	// Fewer fds or goroutines than at the start is fine: earlier tests'
	// connections may still have been closing then.
	if procs != procs0 || fds > fds0 || gor > gor0 {
		t.Errorf("leak after %d cycles: processes %d → %d, fds %d → %d, goroutines %d → %d", cycles, procs0, procs, fds0, fds, gor0, gor)
	}
	if st := u.Status(); st.Connects != cycles+1 || st.IdleCloses != cycles+1 {
		t.Errorf("status = %+v, want %d connects and idle closes", st, cycles+1)
	}
}

func BenchmarkCallStdio(b *testing.B) {
	p := newPool(b, nil)
	srv, _ := testServer(b, "bench", nil)
	u := p.Upstream(srv)
	call(b, u, "echo", map[string]any{"message": "warm"})
	args := map[string]any{"message": "hello"}
	b.ResetTimer()
	for b.Loop() {
		if _, err := u.Call(context.Background(), "echo", args, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCallStdioParallel(b *testing.B) {
	p := newPool(b, nil)
	srv, _ := testServer(b, "bench", nil)
	u := p.Upstream(srv)
	call(b, u, "echo", map[string]any{"message": "warm"})
	b.RunParallel(func(pb *testing.PB) {
		args := map[string]any{"message": "hello"}
		for pb.Next() {
			if _, err := u.Call(context.Background(), "echo", args, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkConnectStdio measures a cold start: process start, handshake,
// listing, one call, and close.
func BenchmarkConnectStdio(b *testing.B) {
	p := newPool(b, nil)
	srv, _ := testServer(b, "bench", nil)
	u := p.Upstream(srv)
	for b.Loop() {
		call(b, u, "echo", map[string]any{"message": "x"})
		u.dropSession(u.currentSession(), "bench")
	}
}
