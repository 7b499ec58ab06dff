//go:build linux

package main

// The proxy bench's memory and process phases.

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// idlePhase starts a daemon with benchIdleServers servers whose tools are
// all in the cache, and reads its memory while nothing runs.
func (b *benchRun) idlePhase(ctx context.Context) error {
	b.progress("memory: a daemon with %d cached servers", benchIdleServers)
	dir := filepath.Join(b.dir, "idle")
	cfg, err := benchWriteServers(dir, b.o.Self, "b", benchIdleServers, nil)
	if err != nil {
		return err
	}
	if err := benchWriteCache(filepath.Join(dir, "cache.json"), cfg, b.tools); err != nil {
		return err
	}
	d, err := startBenchDaemon(ctx, b.o.Mcpgw, dir, cfg, "--no-bootstrap")
	if err != nil {
		return err
	}
	defer d.stop()
	// Let start-up garbage be collected and the runtime settle.
	if err := benchSleep(ctx, 2*time.Second); err != nil {
		return err
	}
	idle := &benchIdle{Servers: benchIdleServers}
	m, err := benchProcMemory(d.pid)
	if err != nil {
		return err
	}
	idle.RSSKB, idle.AnonKB = m.RSS, m.Anon
	kids, err := benchChildren(d.pid)
	if err != nil {
		return err
	}
	idle.Children = len(kids)

	client := mcp.NewClient(&mcp.Implementation{Name: "mcpgw-bench", Version: version}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.url + "/mcp?mode=direct", HTTPClient: b.httpClient(), DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: b.o.ClientProtocol})
	if err != nil {
		return fmt.Errorf("connecting to the idle daemon: %w", err)
	}
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			cs.Close()
			return fmt.Errorf("listing the idle daemon's tools: %w", err)
		}
		idle.ListedTools++
	}
	cs.Close()
	if m, err = benchProcMemory(d.pid); err != nil {
		return err
	}
	idle.ListedRSSKB = m.RSS
	if kids, err = benchChildren(d.pid); err != nil {
		return err
	}
	idle.ChildrenAfter = len(kids)
	b.rep.Idle = idle

	if want := benchIdleServers * len(b.tools); idle.ListedTools != want {
		b.rep.Problems = append(b.rep.Problems, fmt.Sprintf("the idle daemon listed %d tools from its cache, want %d", idle.ListedTools, want))
	}
	if idle.Children != 0 || idle.ChildrenAfter != 0 {
		b.rep.Problems = append(b.rep.Problems, fmt.Sprintf("the idle daemon has %d child processes (%d after listing), want 0", idle.Children, idle.ChildrenAfter))
	}
	return nil
}

// processPhase has benchFanSessions sessions call a tool on every one of
// benchFanServers servers at once and counts the upstream processes.
func (b *benchRun) processPhase(ctx context.Context) error {
	b.progress("processes: %d sessions × %d servers", benchFanSessions, benchFanServers)
	dir := filepath.Join(b.dir, "fan")
	pidFile := filepath.Join(dir, "pids")
	cfg, err := benchWriteServers(dir, b.o.Self, "s", benchFanServers, map[string]string{fakeupstream.EnvPIDFile: pidFile})
	if err != nil {
		return err
	}
	// No cache and no bootstrap: nothing runs until the calls, which find
	// their servers' tools by connecting them.
	d, err := startBenchDaemon(ctx, b.o.Mcpgw, dir, cfg, "--no-bootstrap")
	if err != nil {
		return err
	}
	defer d.stop()

	client := mcp.NewClient(&mcp.Implementation{Name: "mcpgw-bench", Version: version}, nil)
	var sessions []*mcp.ClientSession
	defer func() {
		for _, cs := range sessions {
			cs.Close()
		}
	}()
	for range benchFanSessions {
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.url + "/mcp?mode=proxy", HTTPClient: b.httpClient()}, &mcp.ClientSessionOptions{ProtocolVersion: b.o.ClientProtocol})
		if err != nil {
			return fmt.Errorf("connecting to the daemon: %w", err)
		}
		sessions = append(sessions, cs)
	}
	pr := &benchProcesses{Servers: benchFanServers, Sessions: benchFanSessions, Direct: benchFanServers * benchFanSessions}
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for _, cs := range sessions {
		for i := range benchFanServers {
			// Each call may start its server: on a busy machine ten
			// processes starting at once take longer than a warm call's
			// bound, and this phase counts processes, not time.
			call := benchCall{tool: "mcp", args: map[string]any{"tool": benchServerName("s", i) + "_echo", "args": map[string]any{"message": benchMessage}},
				timeout: benchColdCallTimeout}
			wg.Go(func() {
				err := call.do(ctx, cs)
				mu.Lock()
				defer mu.Unlock()
				pr.Calls++
				if err != nil {
					pr.Errors++
					if first == nil {
						first = err
					}
				}
			})
		}
	}
	wg.Wait()
	if err := pr.count(d.pid, pidFile); err != nil {
		return err
	}
	b.rep.Processes = pr
	b.rep.Errors += pr.Errors
	if first != nil {
		b.rep.Problems = append(b.rep.Problems, fmt.Sprintf("%d sessions × %d servers: %d of %d calls failed, first: %v", benchFanSessions, benchFanServers, pr.Errors, pr.Calls, first))
	}
	if pr.Errors > 0 {
		b.rep.Problems = append(b.rep.Problems, d.problems(fmt.Sprintf("%d-server", benchFanServers))...)
	}
	if pr.Children != benchFanServers || pr.Starts != benchFanServers {
		b.rep.Problems = append(b.rep.Problems, fmt.Sprintf("%d sessions × %d servers: %d upstream processes running, %d started; want %d",
			benchFanSessions, benchFanServers, pr.Children, pr.Starts, benchFanServers))
	}
	return ctx.Err()
}

// count records the processes the daemon runs (upstreams and helpers) and
// their memory, and how many upstreams were ever started (pidFile).
func (pr *benchProcesses) count(daemon int, pidFile string) error {
	kids, helpers, err := benchUpstreams(daemon)
	if err != nil {
		return err
	}
	pr.Children, pr.Helpers = len(kids), len(helpers)
	pids, err := fakeupstream.ReadPIDs(pidFile)
	if err != nil {
		return err
	}
	pr.Starts = len(pids)
	m, _ := benchProcMemory(daemon)
	pr.DaemonRSSKB = m.RSS
	for _, k := range kids {
		m, _ := benchProcMemory(k)
		pr.UpstreamRSSKB += m.RSS
		pr.UpstreamAnonKB += m.Anon
	}
	for _, k := range helpers {
		m, _ := benchProcMemory(k)
		pr.HelperRSSKB += m.RSS
		pr.HelperAnonKB += m.Anon
	}
	return nil
}
