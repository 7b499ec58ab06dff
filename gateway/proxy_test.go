package gateway

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// The `mcp` tool is all a proxy-mode client sees; its whole definition must
// stay under 1,000 bytes.
func TestProxyToolSize(t *testing.T) {
	tool := proxyTool()
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
		got, _, err := decodeArgs(json.RawMessage(tt.in))
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

func testTool(schema string) *registry.Tool {
	return &registry.Tool{Name: "srv_echo", Server: "srv", Original: "echo",
		Def: &mcp.Tool{Name: "echo", Description: "Echo a message", InputSchema: json.RawMessage(schema)}}
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
	got := paramsText(tool)
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
	if got := paramsText(none); got != "Parameters of srv_echo: none." {
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
		if got := shorten(tt.in, tt.n); got != tt.want {
			t.Errorf("shorten(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestProxyPrompts(t *testing.T) {
	gw, _ := newTestGateway(t, registry.Settings{Mode: ModeProxy}, "alpha")
	connectNow(t, gw, "alpha")
	c := connect(t, gw, SessionOptions{})
	got, isErr := c.call(t, "mcp", map[string]any{"prompts": true})
	if isErr || !strings.Contains(got, "- alpha_greet(name (required)): Greets someone.") || !strings.HasPrefix(got, "1 prompt(s)") {
		t.Errorf("prompts list = %q (error %v)", got, isErr)
	}
	got, isErr = c.call(t, "mcp", map[string]any{"prompts": true, "server": "nope"})
	if isErr || got != "Server nope has no prompts." {
		t.Errorf("prompts of an unknown server = %q (error %v)", got, isErr)
	}
	got, isErr = c.call(t, "mcp", map[string]any{"prompt": "alpha_greet", "args": map[string]any{"name": "Ada"}})
	if isErr || got != "[user] Say hello to Ada." {
		t.Errorf("prompt get = %q (error %v)", got, isErr)
	}
	got, isErr = c.call(t, "mcp", map[string]any{"prompt": "greet"})
	if !isErr || !strings.Contains(got, "Did you mean: alpha_greet?") {
		t.Errorf("unknown prompt = %q (error %v), want a suggestion", got, isErr)
	}
}

// TestSearchPages: search answers page with offset and limit and say
// where the next page starts; the pages together are the whole answer,
// in order, each tool once. ToolSearch pages the same way.
func TestSearchPages(t *testing.T) {
	gw, _ := newTestGateway(t, registry.Settings{}, "alpha")
	connectNow(t, gw, "alpha")
	c := connect(t, gw, SessionOptions{})
	whole, _ := c.call(t, "mcp", map[string]any{"search": ".", "regex": true, "limit": 100})
	all := toolLines(whole)
	if len(all) < 12 {
		t.Fatalf("the whole answer lists %d tools:\n%s", len(all), whole)
	}
	var paged []string
	for offset := 0; ; {
		text, isErr := c.call(t, "mcp", map[string]any{"search": ".", "regex": true, "limit": 5, "offset": offset})
		if isErr {
			t.Fatalf("page at %d: %s", offset, text)
		}
		head, _, _ := strings.Cut(text, "\n")
		want := fmt.Sprintf("%d tools match \".\" (%d–%d shown", len(all), offset+1, min(offset+5, len(all)))
		if !strings.HasPrefix(head, want) {
			t.Fatalf("page header %q, want it to start %q", head, want)
		}
		paged = append(paged, toolLines(text)...)
		_, next, ok := strings.Cut(head, "nextOffset: ")
		if !ok {
			break
		}
		n, err := strconv.Atoi(strings.TrimSuffix(next, "):"))
		if err != nil || n != offset+5 {
			t.Fatalf("nextOffset in %q", head)
		}
		offset = n
	}
	if !slices.Equal(paged, all) {
		t.Errorf("pages:\n%q\nwhole:\n%q", paged, all)
	}
	if text, _ := c.call(t, "mcp", map[string]any{"search": ".", "regex": true, "offset": 500}); !strings.Contains(text, "offset 500 is past the last") {
		t.Errorf("past the end: %q", text)
	}

	ts := connect(t, gw, SessionOptions{Mode: ModeToolSearch})
	first, _ := ts.call(t, "ToolSearch", map[string]any{"query": "echo message", "max_results": 1})
	if !strings.Contains(first, `offset: 1}) (nextOffset: 1)`) {
		t.Fatalf("ToolSearch first page: %s", first)
	}
	second, _ := ts.call(t, "ToolSearch", map[string]any{"query": "echo message", "max_results": 1, "offset": 1})
	a, b := activatedLine(first), activatedLine(second)
	if a == "" || b == "" || a == b || !strings.Contains(second, "nextOffset: 2") {
		t.Errorf("ToolSearch pages activate %q then %q:\n%s", a, b, second)
	}
}

// toolLines returns the tool names of a search answer's lines.
func toolLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n")[1:] {
		if name, _, ok := strings.Cut(l, " - "); ok && !strings.HasPrefix(l, " ") {
			out = append(out, name)
		}
	}
	return out
}

// activatedLine is the tool a one-tool ToolSearch answer activated.
func activatedLine(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if name, ok := strings.CutPrefix(l, "- "); ok {
			name, _, _ = strings.Cut(name, " - ")
			return name
		}
	}
	return ""
}
