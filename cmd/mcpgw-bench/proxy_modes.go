//go:build linux

package main

// The daemon's memory at 64 sessions, one mode at a time: the sessions of
// that mode alone are open, all calling, as a user of that mode would run
// them (the throughput phase keeps every path's sessions open at once).

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchModeSessions is how many sessions each mode is loaded with.
const benchModeSessions = 64

// benchModeMemory is the daemon's memory while one mode's sessions call.
type benchModeMemory struct {
	Mode     string `json:"mode"`
	Sessions int    `json:"sessions"`
	Calls    int    `json:"calls"`
	Errors   int    `json:"errors"`
	// PeakRSSKB and PeakAnonKB are the largest VmRSS and RssAnon sampled
	// while the sessions called; EndRSSKB is VmRSS when the calls stopped,
	// the sessions still open.
	PeakRSSKB  int64 `json:"peakRssKB"`
	PeakAnonKB int64 `json:"peakAnonKB"`
	EndRSSKB   int64 `json:"endRssKB"`
}

// modesPhase loads the daemon with benchModeSessions sessions of each mode
// in turn (HTTP in direct mode, HTTP through the mcp tool, the stdio shim
// in direct mode), each for the measuring time of a path, closing them and
// letting the daemon settle before the next.
func (c *callBench) modesPhase(ctx context.Context) error {
	modes := []struct {
		name string
		call benchCall
		open func() ([]*mcp.ClientSession, error)
	}{
		{"HTTP, direct tools", c.viaDaemon, func() ([]*mcp.ClientSession, error) {
			return c.httpSessions(c.daemonURL("direct"), benchModeSessions)
		}},
		{"HTTP, mcp tool", c.viaProxy, func() ([]*mcp.ClientSession, error) {
			return c.httpSessions(c.daemonURL("proxy"), benchModeSessions)
		}},
		{"stdio shim, direct tools", c.viaDaemon, func() ([]*mcp.ClientSession, error) {
			var out []*mcp.ClientSession
			for range benchModeSessions {
				cs, _, err := c.shimSession()
				if err != nil {
					return out, err
				}
				out = append(out, cs)
			}
			return out, nil
		}},
	}
	for _, m := range modes {
		c.b.progress("memory: %d sessions, %s", benchModeSessions, m.name)
		sessions, err := m.open()
		closeAll := func() {
			for _, cs := range sessions {
				_ = cs.Close()
			}
			// Their keep-alive connections too, or the next mode would
			// be measured with them open.
			c.b.httpClient().CloseIdleConnections()
		}
		if err != nil {
			closeAll()
			return err
		}
		p := newBenchPath(m.name, m.call, sessions, map[string]int{"daemon": c.d.pid})
		p.warmUp(ctx, 20)
		p.run(ctx, c.b.o.Duration)
		fig := &benchModeMemory{Mode: m.name, Sessions: len(sessions), Calls: p.calls, Errors: p.errs,
			PeakRSSKB: p.rssPeakKB, PeakAnonKB: p.anonPeakKB}
		if mem, err := benchProcMemory(c.d.pid); err == nil {
			fig.EndRSSKB = mem.RSS
		}
		closeAll()
		c.b.rep.Modes = append(c.b.rep.Modes, fig)
		c.b.rep.Errors += p.errs
		if p.firstErr != nil {
			c.b.rep.Problems = append(c.b.rep.Problems, fmt.Sprintf("memory, %s (%d sessions): %d of %d calls failed, first: %v",
				m.name, len(sessions), p.errs, p.errs+p.calls, p.firstErr))
		}
		if err := benchSleep(ctx, c.b.settle()); err != nil {
			return err
		}
	}
	return nil
}
