// Package proctest has helpers for tests that start processes: whether one
// still runs, waiting for it to end, and a buffer for its output. Only
// tests import it.
package proctest

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Alive reports whether pid is a running process (on Linux, a zombie is
// not).
func Alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		if _, serr := os.Stat("/proc/self/stat"); serr != nil { // no /proc
			return syscall.Kill(pid, 0) == nil
		}
		return false
	}
	// pid (comm) state ...; comm may contain spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// WaitGone waits up to d for every pid to end, and returns those still
// alive then (none: all ended).
func WaitGone(d time.Duration, pids ...int) []int {
	deadline := time.Now().Add(d)
	for {
		var left []int
		for _, pid := range pids {
			if Alive(pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Buffer is a bytes.Buffer safe for concurrent writers and readers, for a
// process's output.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
