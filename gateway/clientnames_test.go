package gateway

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/registry"
)

// A ToolSearch result names tools as the client shows them, so the model
// calls a name it has; select: accepts both forms.
func TestToolSearchNamesAreCallable(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{Mode: ModeToolSearch}, "everything")
	connectNow(t, gw, "everything")
	for _, tc := range []struct{ client, prefix, want string }{
		{"pi-mcp-mcpgw", "", "- mcpgw_everything_echo - "},
		{"pi", "", "- mcp__mcpgw__everything_echo - "},
		{"other", "", "- everything_echo - "},
		{"other", "gw_", "- gw_everything_echo - "},
	} {
		c := connectAs(t, gw, SessionOptions{ClientPrefix: tc.prefix}, tc.client)
		text, isErr := c.call(t, "ToolSearch", map[string]any{"query": "select:" + strings.TrimSuffix(strings.TrimPrefix(tc.want, "- "), " - ")})
		if isErr || !strings.Contains(text, tc.want) {
			t.Errorf("%s: ToolSearch answer %q (error %v), want a line %q", tc.client, text, isErr, tc.want)
		}
		if got := c.tools(t); !slices.Contains(got, "everything_echo") {
			t.Errorf("%s: tools after select %v", tc.client, got)
		}
	}
}

// In proxy mode the mcp tool takes mcpgw's names, and the client's too.
func TestProxyAcceptsClientNames(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{}, "everything")
	c := connectAs(t, gw, SessionOptions{}, "pi")
	connectNow(t, gw, "everything")
	for _, name := range []string{"everything_echo", "mcp__mcpgw__everything_echo"} {
		text, isErr := c.call(t, "mcp", map[string]any{"tool": name, "args": map[string]any{"message": "hi"}})
		if isErr || text != "hi" {
			t.Errorf("mcp({tool:%q}) = %q (error %v)", name, text, isErr)
		}
	}
}

func connectNow(t *testing.T, gw *Hub, name string) {
	t.Helper()
	if err := gw.connectNow(context.Background(), gw.Catalog().View().Config.Servers[name]); err != nil {
		t.Fatal(err)
	}
}
