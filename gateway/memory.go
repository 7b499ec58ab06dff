package gateway

import (
	"context"
	"runtime/debug"
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
// work (start-up counts as work), until ctx ends.
//
// A soft memory limit that followed the live heap (live + half of it +
// stacks) kept the daemon's RSS under the proxy bench's 64-session load
// at 28 MB instead of 37-39, but collecting that often cost 72-99 µs of
// CPU per call instead of 58-66 and throughput fell to 0.79-0.87× of the
// direct path: the collector keeps Go's pace, and memory goes back once
// the burst is over.
func (s *Server) settleWhenIdle(ctx context.Context) {
	t := time.NewTicker(settleIdle)
	defer t.Stop()
	last, worked := s.activity.Load(), true
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		switch now := s.activity.Load(); {
		case now != last:
			last, worked = now, true
		case worked:
			worked = false
			settleMemory()
		}
	}
}

// settleMemory hands back what the last burst of work left: free heap and
// the touched pages of the executable.
func settleMemory() {
	debug.FreeOSMemory()
	deploy.TrimText()
}
