package gateway

import (
	"context"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"time"

	"github.com/mcpgw/mcpgw/deploy"
)

// A daemon lives for weeks and is idle most of that time, so it gives
// memory back when a burst of work ends: the heap the burst grew (debug.
// FreeOSMemory: a collection, then the free pages returned at once rather
// than over minutes) and the pages of its own code and read-only data the
// burst touched (deploy.TrimText), which the kernel reads back from the
// page cache when they are next needed.

// settleIdle is how long without a request counts as the end of a burst.
const settleIdle = 5 * time.Second

// busy notes a request, for settleWhenIdle.
func (s *Server) busy() { s.activity.Add(1) }

// settleWhenIdle settles memory each time the daemon goes quiet after
// work (start-up counts as work), and keeps the heap's headroom in
// proportion while it works, until ctx ends.
func (s *Server) settleWhenIdle(ctx context.Context) {
	t := time.NewTicker(limitEvery)
	defer t.Stop()
	last, worked, quiet := s.activity.Load(), true, time.Duration(0)
	var lim memoryLimiter
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		lim.adjust()
		switch now := s.activity.Load(); {
		case now != last:
			last, worked, quiet = now, true, 0
		case worked:
			if quiet += limitEvery; quiet >= settleIdle {
				worked = false
				settleMemory()
			}
		}
	}
}

// limitEvery is how often the memory limit follows the live heap.
const limitEvery = time.Second

// Under load, Go's collector lets the heap grow to twice what is live
// before it collects; a daemon of many sessions, each mostly idle
// buffers, then holds twice what it needs. memoryLimiter sets the
// runtime's soft memory limit a little above what is in use — live heap
// plus half of it (at least limitHeadroom) plus stacks and the runtime's
// own — so the heap grows about half of what is live between collections
// instead. The limit follows the live heap every second, so a bigger
// catalogue or more sessions raise it, and the collector never chases a
// limit below what is live.
type memoryLimiter struct {
	samples []rtmetrics.Sample
}

const (
	limitHeadroom = 4 << 20
	limitFloor    = 16 << 20
)

func (l *memoryLimiter) adjust() {
	if l.samples == nil {
		l.samples = []rtmetrics.Sample{
			{Name: "/gc/heap/live:bytes"},
			{Name: "/memory/classes/total:bytes"},
			{Name: "/memory/classes/heap/objects:bytes"},
			{Name: "/memory/classes/heap/unused:bytes"},
			{Name: "/memory/classes/heap/free:bytes"},
			{Name: "/memory/classes/heap/released:bytes"},
		}
	}
	rtmetrics.Read(l.samples)
	for _, s := range l.samples {
		if s.Value.Kind() != rtmetrics.KindUint64 {
			return
		}
	}
	live := l.samples[0].Value.Uint64()
	heap := l.samples[2].Value.Uint64() + l.samples[3].Value.Uint64() + l.samples[4].Value.Uint64() + l.samples[5].Value.Uint64()
	other := l.samples[1].Value.Uint64() - heap // stacks, runtime metadata
	limit := live + max(live/2, limitHeadroom) + other
	debug.SetMemoryLimit(int64(max(limit, limitFloor)))
}

// settleMemory hands back what the last burst of work left: free heap and
// the touched pages of the executable.
func settleMemory() {
	debug.FreeOSMemory()
	deploy.TrimText()
}
