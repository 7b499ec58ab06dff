package gateway

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// TestServerInstructionsReachTheModel: a server's instructions are in a
// direct session's initialize, in the mcp tool's list of its tools, in
// ToolSearch's description and with the first tools ToolSearch activates.
func TestServerInstructionsReachTheModel(t *testing.T) {
	t.Parallel()
	const said = "Call alpha_echo before anything else."
	cfg := &registry.Config{Servers: map[string]*registry.Server{
		"alpha": fakeupstream.Server("alpha", map[string]string{fakeupstream.EnvInstructions: said}),
		"beta":  fakeupstream.Server("beta", nil),
	}, Settings: registry.Settings{ToolPrefix: registry.PrefixServer}}
	gw := New(cfg, &Options{NoBootstrap: true})
	t.Cleanup(func() { gw.Close() })
	gw.Start()
	connectNow(t, gw, "alpha")
	connectNow(t, gw, "beta")

	direct := connect(t, gw, SessionOptions{Mode: ModeDirect})
	if got := initInstructions(direct.sess); !strings.Contains(got, "## alpha\n"+said) || strings.Contains(got, "## beta") {
		t.Errorf("direct initialize instructions = %q", got)
	}
	proxy := connect(t, gw, SessionOptions{})
	if got := initInstructions(proxy.sess); !strings.Contains(got, "Servers with usage instructions, shown with their tools: alpha.") {
		t.Errorf("proxy initialize instructions = %q", got)
	}
	if text, _ := proxy.call(t, "mcp", map[string]any{"server": "alpha"}); !strings.Contains(text, "Instructions from alpha:\n"+said+"\n\nTools:\nalpha_") {
		t.Errorf("mcp({server}) = %q", text)
	}
	if text, _ := proxy.call(t, "mcp", map[string]any{"server": "beta"}); strings.Contains(text, "Instructions") {
		t.Errorf("mcp({server: beta}) = %q", text)
	}

	ts := connect(t, gw, SessionOptions{Mode: ModeToolSearch})
	res, err := ts.sess.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == surface.ToolSearchName && !strings.Contains(tool.Description, "Servers with usage instructions (given with their first activated tools): alpha.") {
			t.Errorf("ToolSearch description: %s", tool.Description)
		}
	}
	first, _ := ts.call(t, "ToolSearch", map[string]any{"query": "select:alpha_echo,beta_echo"})
	if strings.Count(first, said) != 1 || !strings.Contains(first, "Instructions from alpha:") {
		t.Errorf("first activation: %q", first)
	}
	again, _ := ts.call(t, "ToolSearch", map[string]any{"query": "select:alpha_add"})
	if strings.Contains(again, said) {
		t.Errorf("instructions given twice: %q", again)
	}
}

func initInstructions(s *mcp.ClientSession) string {
	if r := s.InitializeResult(); r != nil {
		return r.Instructions
	}
	return ""
}
