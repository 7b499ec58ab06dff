package gateway

import (
	"slices"
	"sync"
	"time"
)

// latencies keeps each server's last callWindow call durations, for the
// status page's p50 (Prometheus has the histograms; a person wants a
// number).
type latencies struct {
	mu sync.Mutex
	m  map[string]*latencyRing
}

const callWindow = 256

type latencyRing struct {
	d []time.Duration
	i int
}

func (l *latencies) add(server string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]*latencyRing{}
	}
	r := l.m[server]
	if r == nil {
		r = &latencyRing{}
		l.m[server] = r
	}
	if len(r.d) < callWindow {
		r.d = append(r.d, d)
		return
	}
	r.d[r.i] = d
	r.i = (r.i + 1) % callWindow
}

// p50 is the median of the server's recent calls; 0 when it has none.
func (l *latencies) p50(server string) time.Duration {
	l.mu.Lock()
	r := l.m[server]
	var d []time.Duration
	if r != nil {
		d = slices.Clone(r.d)
	}
	l.mu.Unlock()
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[(len(d)-1)/2]
}
