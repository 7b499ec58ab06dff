package gateway

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/registry"
)

func TestProxyPrompts(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
