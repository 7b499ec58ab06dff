package surface

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// The `mcp` tool is all a proxy-mode client sees; its whole definition must
// stay under 1,000 bytes.
func TestProxyToolSize(t *testing.T) {
	tool := MCPTool()
	data, err := json.Marshal(tool)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(data); n >= 1000 {
		t.Fatalf("mcp tool definition is %d bytes, want < 1000:\n%s", n, data)
	}
	var schema map[string]any
	if err := json.Unmarshal([]byte(proxySchema), &schema); err != nil {
		t.Fatalf("proxy schema is not JSON: %v", err)
	}
	props := schema["properties"].(map[string]any)
	for _, k := range []string{"tool", "args", "search", "regex", "includeSchemas", "describe", "server", "connect", "prompts", "prompt"} {
		if _, ok := props[k]; !ok {
			t.Errorf("proxy schema lacks %q", k)
		}
	}
	t.Logf("mcp tool definition: %d bytes", len(data))
}

func TestDecodeArgs(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{``, `{}`, ""},
		{`null`, `{}`, ""},
		{`{"message":"hi"}`, `{"message":"hi"}`, ""},
		{`"{\"message\":\"hi\"}"`, `{"message":"hi"}`, ""},
		{`""`, `{}`, ""},
		{`"  "`, `{}`, ""},
		{`"not json"`, ``, "args must be a JSON object"},
		{`[1,2]`, ``, "args must be a JSON object"},
		{`42`, ``, "args must be a JSON object"},
	}
	for _, tt := range tests {
		got, _, err := DecodeArgs(json.RawMessage(tt.in))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("decodeArgs(%s) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("decodeArgs(%s): %v", tt.in, err)
			continue
		}
		data := got
		if string(data) != tt.want {
			t.Errorf("decodeArgs(%s) = %s, want %s", tt.in, data, tt.want)
		}
	}
}

func TestNestedGatewayKeys(t *testing.T) {
	plain := testTool(`{"type":"object","properties":{"message":{"type":"string"}}}`)
	ownTool := testTool(`{"type":"object","properties":{"tool":{"type":"string"},"args":{"type":"array"}}}`)
	tests := []struct {
		tool *registry.Tool
		args string
		want string
	}{
		{plain, `{"message":"hi"}`, ""},
		{plain, `{"tool":"srv_echo","args":{"message":"hi"}}`, "tool,args"},
		{plain, `{"args":{"message":"hi"}}`, "args"},
		{plain, `{"tool":"x","message":"hi"}`, ""}, // a lone "tool" is not proof
		{ownTool, `{"tool":"x","args":[1]}`, ""},   // the tool's own parameters
	}
	for _, tt := range tests {
		var args map[string]json.RawMessage
		if err := json.Unmarshal([]byte(tt.args), &args); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(nestedGatewayKeys(tt.tool, args), ",")
		if got != tt.want {
			t.Errorf("nestedGatewayKeys(%s) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

func TestParamsText(t *testing.T) {
	tool := testTool(`{"type":"object","required":["message"],"properties":{
		"message":{"type":"string","description":"Text to echo"},
		"count":{"type":"integer","default":1},
		"mode":{"type":"string","enum":["loud","quiet"]},
		"tags":{"type":"array","items":{"type":"string"}},
		"when":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`)
	got := Params(tool)
	want := `Parameters of srv_echo: {
  message: string; // Text to echo
  count?: number; // (default 1)
  mode?: "loud" | "quiet";
  tags?: string[];
  when?: string | null;
}`
	if got != want {
		t.Errorf("paramsText =\n%s\nwant\n%s", got, want)
	}
	none := testTool(`{"type":"object"}`)
	if got := Params(none); got != "Parameters of srv_echo: none." {
		t.Errorf("paramsText(no params) = %q", got)
	}
}

func TestShorten(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"  many   spaces\nand lines ", 40, "many spaces and lines"},
		{"Create a new issue in a GitHub repository with labels", 30, "Create a new issue in a…"},
		{"Überlänge überall", 8, "Überlän…"},
	}
	for _, tt := range tests {
		if got := Shorten(tt.in, tt.n); got != tt.want {
			t.Errorf("shorten(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func testTool(schema string) *registry.Tool {
	return &registry.Tool{Name: "srv_echo", Server: "srv", Original: "echo",
		Def: &mcp.Tool{Name: "echo", Description: "Echo a message", InputSchema: json.RawMessage(schema)}}
}
