package runloop

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

// settleLook is how often the daemon looks whether it has been quiet.
const settleLook = 5 * time.Second

// settleQuiet is how long without a request counts as the end of a burst.
// An agent's session calls tools between turns of its model, seconds to
// tens of seconds apart: handing memory back after 5 s of quiet did it
// between most turns, and each next call faulted the heap and the
// executable's pages back in (about 110 page faults and 5 ms more for a
// lone call, 900 faults and 10-20 µs more per call over the next 4,000).
// After 30 s, a session in use stays warm, and an idle daemon is small
// again within the minute.
const settleQuiet = 30 * time.Second

// settleStart is when the daemon first looks whether it is quiet, after
// it starts: once it has gone down to one CPU (settleAfter), before five
// seconds. startedMemory hands start-up's pages back as soon as the cached
// listings are in, but what start-up does after (the listeners, the first
// log lines, on every CPU at once) touches 7-9 MB of the executable's
// pages again, which stayed until the first settle: a daemon with a
// warm cache of five servers had 13-14 MB of VmRSS until 5 s after its
// start, sometimes a little past, and 6.3 MB after. Settling at 1 s
// instead left 8 MB: going down to one CPU touches pages too.
const settleStart = settleAfter + time.Second

// settleWhenIdle calls settle each time the daemon goes quiet after work,
// until ctx ends: first settleStart after it starts (start-up counts as
// work; if requests came meanwhile, at the first look without any), then
// once settleQuiet has passed without a request, as seen at looks
// settleLook apart: 30 to 35 s after the last. requests counts the
// requests so far; freed what else ended that held memory (connections
// closing on their idle timeout, after the requests): it is work to hand
// back, and does not make the daemon wait another settleQuiet. first
// says it is the first time.
//
// A soft memory limit that followed the live heap (live + half of it +
// stacks) kept the daemon's RSS under the proxy bench's 64-session load
// at 28 MB instead of 37-39, but collecting that often cost 72-99 µs of
// CPU per call instead of 58-66 and throughput fell to 0.79-0.87× of the
// direct path: the collector keeps Go's pace, and memory goes back once
// the burst is over.
func settleWhenIdle(ctx context.Context, requests, freed func() uint64, settle func(first bool)) {
	t := time.NewTimer(settleStart)
	defer t.Stop()
	lastReqs, lastFreed, worked, first := requests(), freed(), true, true
	lastSeen := time.Now() // when lastReqs changed, as a look saw it
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		t.Reset(settleLook)
		if f := freed(); f != lastFreed {
			lastFreed, worked = f, true
		}
		switch now := requests(); {
		case now != lastReqs:
			lastReqs, worked, lastSeen = now, true, time.Now()
		case worked && (first || time.Since(lastSeen) >= settleQuiet):
			worked = false
			settle(first)
			first = false
		}
	}
}

// settleMemory hands back what the last burst of work left: free heap and
// the touched pages of the executable. The first time the daemon is quiet
// after it starts, it also drops the executable's pages from the page
// cache (deploy.EvictText): start-up ran on what the page cache held, and
// what runs after is read back as it is used, so that a fault maps no
// more of the executable's read-only data than the daemon has used.
func settleMemory(first bool) {
	debug.FreeOSMemory()
	if first {
		deploy.EvictText()
		return
	}
	deploy.TrimText()
}

// startedMemory runs once the daemon has loaded its config and the cached
// listings: it hands that garbage back so that an idle daemon stays small.
// What start-up touches after this, settleWhenIdle returns once it is
// quiet.
//
// The collector keeps Go's pace (GOGC 100; $GOGC says otherwise). What a
// collection costs the daemon is, per call, about the bytes a call
// allocates times the mark cost of a live byte, over GOGC: with 147
// sessions open a cycle took 8-14 ms of CPU (gctrace) and, at 30%, came
// every 360 calls of 6 KiB, about 28 µs of each call's CPU; at 100% about
// 14 µs. Paired runs of the proxy bench (--protocol 2025-11-25 --duration
// 6s, 71a700e / 30% / 100%, alternated, three each, machine load 7-25,
// medians), daemon CPU per call at concurrency 1 / 64 sessions: direct
// mode 395 / 175 µs, 406 / 221, 360 / 222; the mcp tool 392 / 239,
// 383 / 235, 374 / 221; c=64 throughput over direct HTTP 0.84× / 0.89×,
// 1.03× / 0.88×, 1.10× / 0.98×. The price is memory: at 64 sessions of
// one mode the peak VmRSS is 28.9 MB in direct mode, 29.2 through the mcp
// tool and 27.0 on the shim at 100%, against 25.4, 25.5 and 23.6 at 30%
// (idle and settled, 6.5 MB either way). A soft memory limit cannot
// win that back: it binds where the heap is biggest, the 147 sessions of
// the latency and throughput phases, before 64 sessions fit. With
// GOMEMLIMIT=14MiB the peaks were 23.9 / 23.6 / 23.6 MB, but the daemon
// collected without pause: 6,030 µs per call at concurrency 1.
func startedMemory() {
	settleMemory(false)
}

// settleAfter is when the daemon goes down to one CPU (see Serve).
const settleAfter = 3 * time.Second
