//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The README's Pi setups, as a user copies them: each test reads its
// snippet from README.md itself, so the README and what is tested are
// one text.

// readmeSnippets returns the ```json blocks of the README section whose
// heading is heading, in order.
func readmeSnippets(t *testing.T, heading string) []string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README.md has no section %q", heading)
	}
	section := text[i+len(heading)+2:]
	level := heading[:strings.IndexByte(heading, ' ')+1] // "### "
	if j := strings.Index(section, "\n"+level); j >= 0 {
		section = section[:j]
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(section, -1) {
		out = append(out, m[1])
	}
	return out
}

// readmeJSON returns the README's Pi snippet whose text contains marker,
// decoded.
func readmeJSON(t *testing.T, marker string) map[string]any {
	t.Helper()
	for _, s := range readmeSnippets(t, "### Pi") {
		if !strings.Contains(s, marker) {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatalf("README snippet does not parse (%v):\n%s", err, s)
		}
		return v
	}
	t.Fatalf("README's Pi section has no snippet with %q", marker)
	return nil
}

// usePiFile writes cfg, a README snippet of Pi's mcp.json, as the Pi
// file of e, with the mcpgw entry pointed at the binary under test and
// at e's socket and config (the snippet's own arguments after those).
func (e *piEnv) usePiFile(cfg map[string]any) {
	e.t.Helper()
	servers, _ := cfg["mcpServers"].(map[string]any)
	entry, _ := servers["mcpgw"].(map[string]any)
	if entry == nil {
		e.t.Fatalf("the snippet has no mcpgw entry: %v", cfg)
	}
	args := []any{"stdio", "--socket", e.sock, "--config", e.config}
	if a, _ := entry["args"].([]any); len(a) > 0 && a[0] == "stdio" {
		args = append(args, a[1:]...)
	}
	entry["command"], entry["args"] = e.bin, args
	writeJSON(e.t, filepath.Join(e.home, ".pi", "agent", "mcp.json"), cfg)
}

// piBuiltins are Pi's own tools, offered whatever MCP says.
var piBuiltins = []string{"read", "bash", "edit", "write", "grep", "find", "ls"}

// mcpToolsOffered returns the tools of a request that are not Pi's own.
func mcpToolsOffered(r modelRequest) []string {
	var out []string
	for _, name := range r.Tools {
		if !slices.Contains(piBuiltins, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// TestPiReadmeOneToolColdAndWarm: the README's Pi entry, exactly, with
// server-everything (which lists resources) behind mcpgw. The model is
// offered one tool, mcpgw_mcp, on the first start and on the starts
// after it, when pi-mcp-adapter builds its tools from its metadata cache
// (a cached resource would become a read_* tool of its own). A resource
// is still read through the mcp tool.
func TestPiReadmeOneToolColdAndWarm(t *testing.T) {
	t.Parallel()
	needPi(t)
	needNode(t)
	node, args := everythingStdioCommand()
	e := newPiEnv(t, map[string]any{"everything": map[string]any{"command": node, "args": args}}, nil, nil, nil,
		// cold: a call, so that everything is connected and its
		// resources known before the adapter's next start.
		modelStep{ToolFrom: "mcp", Args: map[string]any{"tool": "everything_echo", "args": map[string]any{"message": "cold"}}},
		modelStep{Text: "done"},
		// warm: a resource, read through the mcp tool.
		modelStep{ToolFrom: "mcp", Args: map[string]any{"tool": "everything_read_architecture_md"}},
		modelStep{Text: "done"},
		modelStep{Text: "done"},
	)
	e.usePiFile(readmeJSON(t, `"directTools": true`))
	want := []string{"mcpgw_mcp"}

	e.runPi("Echo once.")
	waitCached(t, filepath.Join(e.home, ".pi", "agent", "mcp-cache.json"), "everything", "mcpgw")
	e.runPi("Read the architecture notes.")
	e.runPi("Nothing to do.")
	reqs := e.model.requests()
	for i, r := range reqs {
		t.Logf("request %d tools %v", i, r.Tools)
	}
	if len(reqs) != 5 {
		t.Fatalf("the model was asked %d times, want 5", len(reqs))
	}
	if got := reqs[1].lastToolResult(); !strings.Contains(got, "Echo: cold") {
		t.Errorf("the cold call gave %q", got)
	}
	if got := reqs[3].lastToolResult(); !strings.Contains(strings.ToLower(got), "architecture") {
		t.Errorf("reading a resource through the mcp tool gave %q", got)
	}
	for i, name := range []string{"cold", "cold", "second start", "second start", "third start"} {
		if got := mcpToolsOffered(reqs[i]); !slices.Equal(got, want) {
			t.Errorf("%s: the model is offered %v besides Pi's own tools, want %v", name, got, want)
		}
	}
}
