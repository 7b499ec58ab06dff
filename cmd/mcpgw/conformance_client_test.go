//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// conformanceClientScenarios are the client scenarios of the MCP
// conformance suite that apply to mcpgw's side as a client of upstreams.
// (The others are OAuth flows.)
var conformanceClientScenarios = []string{
	"initialize",
	"tools_call",
	"elicitation-sep1034-client-defaults",
	"sse-retry",
}

// TestConformanceClient runs the suite's client scenarios against mcpgw's
// upstream code: the suite starts its test server and runs this test
// binary as the client (conformanceClientMain), which connects with an
// upstream.Pool as the daemon does.
func TestConformanceClient(t *testing.T) {
	node22, cli := needConformance(t)
	dir := t.TempDir()
	runConformanceCmd(t, dir, conformanceClientScenarios, true, func(sc string) []string {
		return []string{node22, cli, "client", "--command", testServerBin + " conformance-client", "--scenario", sc}
	})
}

// conformanceClientMain is the client program of TestConformanceClient:
// it connects to url with an upstream.Pool and does what the scenario in
// MCP_CONFORMANCE_SCENARIO asks. Elicitation is accepted with no fields
// filled in, so that the schema's defaults apply.
func conformanceClientMain(url string) error {
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	pool := upstream.New(&upstream.Options{ClientName: "mcpgw-conformance-client", ClientVersion: "1.0.0"})
	defer pool.Close()
	srv := &registry.Server{Name: "conformance", URL: url, Enabled: true, Lifecycle: registry.LifecycleLazy, Hash: "conformance"}
	u := pool.Upstream(srv)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ctx = upstream.WithPeer(ctx, acceptingPeer{})
	if _, err := u.Connect(ctx); err != nil {
		return err
	}
	var tool string
	var args map[string]any
	switch scenario {
	case "initialize":
		return nil
	case "tools_call":
		tool, args = "add_numbers", map[string]any{"a": 5, "b": 3}
	case "elicitation-sep1034-client-defaults":
		tool = "test_client_elicitation_defaults"
	case "sse-retry":
		tool = "test_reconnection"
	default:
		return fmt.Errorf("unknown scenario %q", scenario)
	}
	res, err := u.Call(ctx, tool, args)
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("%s: error result %v", tool, res.Content)
	}
	return nil
}

// acceptingPeer answers an upstream's requests as a client that accepts
// every elicitation without filling in anything.
type acceptingPeer struct{}

func (acceptingPeer) CreateMessage(context.Context, *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	return nil, fmt.Errorf("no model here")
}

func (acceptingPeer) Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
}

func (acceptingPeer) ElicitationComplete(context.Context, *mcp.ElicitationCompleteParams) {}

func (acceptingPeer) Roots(context.Context) ([]*mcp.Root, error) { return nil, nil }
