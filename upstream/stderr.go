package upstream

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"sync"
)

const (
	stderrLines   = 50   // lines kept per process
	stderrLineMax = 1024 // bytes kept per line; the rest is cut
	stderrInError = 10   // lines appended to errors
)

// lineRing keeps the last lines written to a process's stderr.
type lineRing struct {
	mu    sync.Mutex
	lines []string // ring of at most stderrLines
	next  int      // index of the oldest line once full
}

func (r *lineRing) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lines) < stderrLines {
		r.lines = append(r.lines, line)
		return
	}
	r.lines[r.next] = line
	r.next = (r.next + 1) % stderrLines
}

// tail returns up to n of the last lines, oldest first.
func (r *lineRing) tail(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := make([]string, 0, len(r.lines))
	all = append(all, r.lines[r.next:]...)
	all = append(all, r.lines[:r.next]...)
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return all
}

// readLines copies lines from rd into r (and to log at debug level) until rd
// fails. Over-long lines are cut to stderrLineMax bytes.
func (r *lineRing) readLines(rd io.Reader, log *slog.Logger) {
	br := bufio.NewReaderSize(rd, stderrLineMax)
	var cut bool // discarding the rest of an over-long line
	for {
		b, err := br.ReadSlice('\n')
		if len(b) > 0 && !cut {
			line := string(trimEOL(b))
			r.add(line)
			log.Debug("upstream stderr", "line", line)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			cut = true
			continue
		case err != nil:
			return
		}
		cut = false
	}
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
