//go:build linux

package main

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestLazyCallFigures prints how long a first call (which starts the
// upstream) and a warm call take through the daemon, next to the same calls
// made directly to the upstream. A figure reporter, not a check: it runs
// only with MCPGW_FIGURES=1.
//
//	MCPGW_FIGURES=1 go test ./cmd/mcpgw -run TestLazyCallFigures -v
func TestLazyCallFigures(t *testing.T) {
	t.Parallel()
	if os.Getenv("MCPGW_FIGURES") != "1" {
		t.Skip("set MCPGW_FIGURES=1 to print the figures")
	}
	e2e.BuildMcpgw(t)
	ctx := context.Background()
	echo := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "x"}}
	const rounds = 15
	median := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}

	var directFirst, directWarm, gwFirst, gwWarm []time.Duration
	for range rounds {
		// Directly: start the server, initialize, call; then a warm call.
		start := time.Now()
		c := mcp.NewClient(&mcp.Implementation{Name: "figures", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(e2e.TestServerBin, "testserver")}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CallTool(ctx, echo); err != nil {
			t.Fatal(err)
		}
		directFirst = append(directFirst, time.Since(start))
		start = time.Now()
		if _, err := cs.CallTool(ctx, echo); err != nil {
			t.Fatal(err)
		}
		directWarm = append(directWarm, time.Since(start))
		cs.Close()

		// Through a daemon whose upstream is not running yet.
		dir := t.TempDir()
		config := e2e.WriteConfig(t, dir, map[string]any{"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}}}, nil)
		d := e2e.StartDaemon(t, dir, config, "--no-bootstrap", "--log-level", "warn")
		gc := mcp.NewClient(&mcp.Implementation{Name: "figures", Version: "1"}, nil)
		gs, err := gc.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.MCPURL(), MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		call := &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{"tool": "go_echo", "args": map[string]any{"message": "x"}}}
		start = time.Now()
		if res, err := gs.CallTool(ctx, call); err != nil || res.IsError {
			t.Fatalf("first call: %v", err)
		}
		gwFirst = append(gwFirst, time.Since(start))
		start = time.Now()
		if _, err := gs.CallTool(ctx, call); err != nil {
			t.Fatal(err)
		}
		gwWarm = append(gwWarm, time.Since(start))
		gs.Close()
		d.Proc.Stop()
	}
	t.Logf("median of %d: first call directly (spawn + initialize + call) %v, through the daemon (lazy connect + call) %v", rounds, median(directFirst), median(gwFirst))
	t.Logf("median of %d: warm call directly %v, through the daemon %v", rounds, median(directWarm), median(gwWarm))
}
