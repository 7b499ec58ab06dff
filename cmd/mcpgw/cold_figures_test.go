//go:build linux

package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestColdFigures prints the cold first-answer latency: a daemon started
// with an empty cache and N servers (server-everything over stdio, a real
// npm server), a client that connects and searches at once, and the time
// until the answer names tools of every server. A figure reporter, not a
// check: it runs only with MCPGW_FIGURES=1.
//
//	MCPGW_FIGURES=1 go test ./cmd/mcpgw -run TestColdFigures -v
func TestColdFigures(t *testing.T) {
	t.Parallel()
	if os.Getenv("MCPGW_FIGURES") != "1" {
		t.Skip("set MCPGW_FIGURES=1 to print the figures")
	}
	e2e.NeedNode(t)
	node, args := e2e.EverythingStdio()
	for _, n := range []int{1, 10} {
		var fromStart, fromAsk []time.Duration
		for range 5 {
			dir := t.TempDir()
			servers := map[string]any{}
			for i := range n {
				servers[fmt.Sprintf("ev%d", i)] = map[string]any{"command": node, "args": args}
			}
			config := e2e.WriteConfig(t, dir, servers, nil)
			start := time.Now()
			d := e2e.StartDaemon(t, dir, config, "--log-level", "warn")
			c := connectGateway(t, d)
			ask := time.Now()
			text, _ := c.mcp(map[string]any{"search": "echo"})
			fromAsk = append(fromAsk, time.Since(ask))
			fromStart = append(fromStart, time.Since(start))
			for i := range n {
				if !strings.Contains(text, fmt.Sprintf("ev%d_echo", i)) {
					t.Errorf("%d servers: the cold answer lacks ev%d_echo:\n%s", n, i, text)
				}
			}
			d.Proc.Stop()
		}
		slices.Sort(fromStart)
		slices.Sort(fromAsk)
		t.Logf("%2d servers, empty cache: search answered with every server's tools %v after the daemon was started (median of 5; %v after the question)",
			n, fromStart[2].Round(time.Millisecond), fromAsk[2].Round(time.Millisecond))
	}
}
