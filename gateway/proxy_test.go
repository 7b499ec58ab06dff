package gateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

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
	want := `Parameters of srv_echo:
- message (string, required): Text to echo
- count (integer) [default: 1]
- mode (string) [one of: "loud", "quiet"]
- tags (string[])
- when (string|null)`
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

func TestConvertResult(t *testing.T) {
	res := &mcp.CallToolResult{
		Content: []mcp.Content{
			&mcp.TextContent{Text: "hello"},
			&mcp.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"},
			&mcp.AudioContent{Data: make([]byte, 10), MIMEType: "audio/wav"},
			&mcp.ResourceLink{URI: "file:///a.txt", Name: "a", MIMEType: "text/plain", Description: "the file"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://x", MIMEType: "text/plain", Text: "inside"}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://b", Blob: []byte("xyz")}},
		},
		StructuredContent: map[string]any{"sum": 3},
	}
	out := convertResult(res)
	var texts []string
	images := 0
	for _, c := range out.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			texts = append(texts, c.Text)
		case *mcp.ImageContent:
			images++
		default:
			t.Errorf("unexpected content %T", c)
		}
	}
	want := []string{
		"hello",
		"[audio: audio/wav, 10 bytes]",
		`[resource link: file:///a.txt, name "a", text/plain] the file`,
		"[resource: mem://x, text/plain]\ninside",
		"[resource: mem://b, 3 bytes of binary data]",
		`{"sum":3}`,
	}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Errorf("texts =\n%q\nwant\n%q", texts, want)
	}
	if images != 1 {
		t.Errorf("images = %d, want 1", images)
	}

	// Structured content already present as text is not repeated.
	dup := convertResult(&mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: `{ "sum": 3 }`}},
		StructuredContent: map[string]any{"sum": 3},
	})
	if len(dup.Content) != 1 {
		t.Errorf("duplicate structured content added: %d blocks", len(dup.Content))
	}
	// Nor when the text says the same in its own words (a file's text and
	// {"content": the text}, as server-filesystem's read_text_file does).
	file := "first line of the file\nsecond line"
	same := convertResult(&mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: file}},
		StructuredContent: map[string]any{"content": file},
	})
	if len(same.Content) != 1 {
		t.Errorf("structured content the text carries was added: %d blocks", len(same.Content))
	}
	// But it is, when the text leaves something out.
	more := convertResult(&mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: file}},
		StructuredContent: map[string]any{"content": file, "path": "/tmp/notes.txt"},
	})
	if len(more.Content) != 2 {
		t.Errorf("structured content with more than the text: %d blocks, want 2", len(more.Content))
	}
}

func TestGuardOutput(t *testing.T) {
	long := strings.Repeat("line of text\n", 100) // 1,300 bytes
	res := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "head\n"},
		&mcp.ImageContent{Data: []byte("png"), MIMEType: "image/png"},
		&mcp.TextContent{Text: long},
		&mcp.TextContent{Text: "tail"},
	}}
	if got := guardOutput(res, 10000); got != res {
		t.Error("a result under the limit was changed")
	}
	if got := guardOutput(res, -1); got != res {
		t.Error("no limit changed the result")
	}
	got := guardOutput(res, 500)
	var texts []string
	images := 0
	size := 0
	for _, c := range got.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			texts = append(texts, c.Text)
		case *mcp.ImageContent:
			images++
		}
	}
	if images != 1 || len(texts) != 3 {
		t.Fatalf("content = %d texts, %d images; want 3 texts (head, cut, note) and the image", len(texts), images)
	}
	for _, s := range texts[:2] {
		size += len(s)
	}
	if size > 500 || !strings.HasSuffix(texts[1], "\n") {
		t.Errorf("kept %d bytes, cut %q; want ≤ 500 ending at a line", size, texts[1][max(0, len(texts[1])-20):])
	}
	want := fmt.Sprintf("[output truncated by mcpgw: %d of %d bytes shown.", size, 5+len(long)+4)
	if !strings.HasPrefix(texts[2], want) {
		t.Errorf("note = %q, want prefix %q", texts[2], want)
	}
	// A cut never splits a UTF-8 sequence.
	u := guardOutput(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("é", 100)}}}, 51)
	if s := u.Content[0].(*mcp.TextContent).Text; !utf8.ValidString(s) || len(s) != 50 {
		t.Errorf("cut = %d bytes, valid %v", len(s), utf8.ValidString(s))
	}
}

// TestProxyPrompts lists and gets prompts through the mcp tool.
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
