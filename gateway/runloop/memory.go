package runloop

import (
	"context"
	"os"
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

// settleStart is when the daemon first looks whether it is quiet, after
// it starts: once it has gone down to one CPU (settleAfter), before five
// seconds. startedMemory hands start-up's pages back as soon as the cached
// listings are in, but what start-up does after (the listeners, the first
// log lines, on every CPU at once) touches 7-9 MB of the executable's
// pages again, which stayed until the first settleIdle: a daemon with a
// warm cache of five servers had 13-14 MB of VmRSS until 5 s after its
// start, sometimes a little past, and 6.3 MB after. Settling at 1 s
// instead left 8 MB: going down to one CPU touches pages too.
const settleStart = settleAfter + time.Second

// settleWhenIdle calls settle each time the daemon goes quiet after work
// (start-up counts as work), until ctx ends: first settleStart after it
// starts, then once settleIdle has passed without a request. activity
// counts what the daemon has done so far (Daemon.activity).
//
// A soft memory limit that followed the live heap (live + half of it +
// stacks) kept the daemon's RSS under the proxy bench's 64-session load
// at 28 MB instead of 37-39, but collecting that often cost 72-99 µs of
// CPU per call instead of 58-66 and throughput fell to 0.79-0.87× of the
// direct path: the collector keeps Go's pace, and memory goes back once
// the burst is over.
func settleWhenIdle(ctx context.Context, activity func() uint64, settle func()) {
	t := time.NewTimer(settleStart)
	defer t.Stop()
	last, worked := activity(), true
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		t.Reset(settleIdle)
		switch now := activity(); {
		case now != last:
			last, worked = now, true
		case worked:
			worked = false
			settle()
		}
	}
}

// settleMemory hands back what the last burst of work left: free heap and
// the touched pages of the executable.
func settleMemory() {
	debug.FreeOSMemory()
	deploy.TrimText()
}

// startedMemory runs once the daemon has loaded its config and the cached
// listings: it hands that garbage back so that an idle daemon stays small.
// What start-up touches after this, settleWhenIdle returns once it is
// quiet.
//
// From then on the collector runs when the heap has grown by 30% of what
// is live (gcPercent), not by all of it as Go's default does, unless $GOGC
// says otherwise. The daemon relays small messages, so its live heap is
// small and a collection cheap. Measured with the proxy benchmark (2
// CPUs), 64 sessions of one mode calling: the daemon's RSS peaks at
// 23.8-24.7 MB at 30%, 25.3-26.2 MB at 50% and about 31 MB at 100%.
// Paired runs since sessions' tools are mcpgw's own table (three each,
// alternated, on a machine busy with other work): at 100% the peak is
// 28.9 MB in direct mode and 29.1 MB through the mcp tool, against 25.1
// and 25.2 at 30%, for daemon CPU per call of 326 / 202 µs at concurrency 1 /
// 64 sessions in direct mode (370 / 199 at 30%) and 325 / 174 through the
// mcp tool (365 / 202): Go's pace saves CPU when few calls run at once,
// but costs 4-7 MB the 25 MB target does not have. Collecting four times
// less often (400%) saved no CPU the benchmark could tell from noise and
// let the heap grow to five times what is live.
func startedMemory() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	settleMemory()
}

// gcPercent is the daemon's GOGC (see startedMemory).
const gcPercent = 30

// settleAfter is when the daemon goes down to one CPU (see Serve).
const settleAfter = 3 * time.Second
