//go:build linux

//lint:file-ignore SA1019 sampling, roots and logging are deprecated as of protocol 2026-07-28 but still spoken by the clients and servers mcpgw sits between; these tests exercise them.

package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// conformanceClientScenarios are the client scenarios of the MCP
// conformance suite that apply to mcpgw's side as a client of upstreams,
// as the pool speaks them. The OAuth flows run through the CLI, as a user
// meets them — `mcpgw login`, then calls through the daemon's pool — at
// each protocol revision (TestConformanceAuthThroughCLI), which covers
// every auth scenario this test ran with the pool alone.
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
	t.Parallel()
	node22, cli := needConformance(t)
	runConformanceScenarios(t, conformanceRun{}, conformanceClientScenarios, func(sc string) []string {
		return []string{node22, cli, "client", "--command", e2e.TestServerBin + " conformance-client", "--scenario", sc, "--timeout", conformanceClientTimeout}
	})
}

// conformanceClient2026Scenarios are the client scenarios of the suite's
// 2026-07-28 requirements that need no more of a client than a pool
// calling a tool: the revision's request metadata, on every request.
var conformanceClient2026Scenarios = []string{"tools_call", "request-metadata"}

// TestConformanceClient2026 runs those scenarios with the suite's 0.2
// release at --spec-version 2026-07-28, the pool speaking that revision.
func TestConformanceClient2026(t *testing.T) {
	t.Parallel()
	node22, cli := needConformanceNext(t)
	runConformanceScenarios(t, conformanceRun{}, conformanceClient2026Scenarios, func(sc string) []string {
		return []string{node22, cli, "client", "--command", e2e.TestServerBin + " conformance-client", "--scenario", sc,
			"--spec-version", "2026-07-28", "--timeout", conformanceClientTimeout}
	})
}

// conformanceClientMain is the client program of TestConformanceClient:
// it connects to url with an upstream.Pool and does what the scenario in
// MCP_CONFORMANCE_SCENARIO asks. Elicitation is accepted with no fields
// filled in, so that the schema's defaults apply.
func conformanceClientMain(url string) error {
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	opts := &upstream.Options{ClientName: "mcpgw-conformance-client", ClientVersion: "1.0.0"}
	srv := &registry.Server{Name: "conformance", URL: url, Enabled: true, Lifecycle: registry.LifecycleLazy, Hash: "conformance"}
	pool := upstream.New(opts)
	defer pool.Close()
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
	case "initialize", "request-metadata":
		return nil
	case "tools_call":
		tool, args = "add_numbers", map[string]any{"a": 5, "b": 3}
	case "elicitation-sep1034-client-defaults":
		tool = "test_client_elicitation_defaults"
	case "sse-retry":
		tool = "test_reconnection"
	default:
		if strings.HasPrefix(scenario, "auth/") {
			tool = "test-tool"
			break
		}
		return fmt.Errorf("unknown scenario %q", scenario)
	}
	res, err := u.Call(ctx, tool, args, nil)
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

// conformanceContext is the scenario's context: a pre-registered client.
func conformanceContext() (sc struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
}) {
	_ = json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &sc)
	return sc
}
