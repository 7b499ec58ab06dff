package surface

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestClientNaming(t *testing.T) {
	long := strings.Repeat("x", 60)
	for _, tc := range []struct {
		override, client, tool, want string
	}{
		{"", "pi-mcp-mcpgw", "everything_echo", "mcpgw_everything_echo"},
		{"", "pi-mcp-gw", "everything_echo", "gw_everything_echo"},
		{"", "pi-mcp-gw", "gw_echo", "gw_echo"},       // the adapter does not double a prefix
		{"", "pi-mcp-my.gw", "echo", "my_2e_gw_echo"}, // sanitizeServerPrefix
		{"", "pi", "everything_echo", "mcp__mcpgw__everything_echo"},
		{"", "pi", "srv-x_echo", "mcp__mcpgw__srv_x_echo"},         // Pi maps "-" to "_"
		{"", "pi", long, "mcp__mcpgw__" + long[:43] + "_ba875788"}, // cut to 64 with a hash, as Pi's createMcpToolName does
		{"", "claude-code", "everything_echo", "everything_echo"},
		{"", "pi-mcp-adapter", "everything_echo", "everything_echo"},
		{"mcp__tools__", "claude-code", "a_b", "mcp__tools__a_b"},
		{"gw_", "pi", "a_b", "gw_a_b"},
		{"none", "pi", "a_b", "a_b"},
	} {
		n := NamingFor(tc.override, &mcp.Implementation{Name: tc.client})
		if got := n.Name(tc.tool); got != tc.want {
			t.Errorf("%s/%q: name(%q) = %q, want %q", tc.client, tc.override, tc.tool, got, tc.want)
		}
	}
}
