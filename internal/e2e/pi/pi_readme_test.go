//go:build unix

package pi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// The README's Pi setups, as a user copies them: each test reads its
// snippet from README.md itself, so the README and what is tested are
// one text.

// readmeSnippets returns the ```json blocks of the README section whose
// heading is heading, in order.
func readmeSnippets(t *testing.T, heading string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e2e.Root, "README.md"))
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

// readmePiFile returns the README's n-th snippet of Pi's mcp.json (from
// 0, in the Pi section's order), decoded.
func readmePiFile(t *testing.T, n int) map[string]any {
	t.Helper()
	snippets := readmeSnippets(t, "### Pi")
	if n >= len(snippets) {
		t.Fatalf("README's Pi section has %d snippets, want a %d-th", len(snippets), n+1)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(snippets[n]), &v); err != nil {
		t.Fatalf("README snippet does not parse (%v):\n%s", err, snippets[n])
	}
	return v
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
	e2e.WriteJSON(e.t, filepath.Join(e.home, ".pi", "agent", "mcp.json"), cfg)
}

// warmDaemon starts e's daemon and waits until it has discovered server
// (a daemon connects, at its start, each server whose tools it has not
// cached) and written its listing to the metadata cache it shares with
// pi-mcp-adapter, before Pi first starts: Pi's runs then only read what
// mcpgw cached, and the adapter is the only one writing the file.
func (e *piEnv) warmDaemon(server string) {
	e.t.Helper()
	e.serve()
	e2e.WaitCached(e.t, filepath.Join(e.home, ".pi", "agent", "mcp-cache.json"), server)
}

// piBuiltins are Pi's own tools, offered whatever MCP says.
var piBuiltins = []string{"read", "bash", "edit", "write", "grep", "find", "ls"}

// mcpToolsOffered returns the tools of a request that are not Pi's own.
func mcpToolsOffered(r e2e.ModelRequest) []string {
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
// offered one tool, mcpgw_mcp, on Pi's first start (the adapter's cache
// holds nothing of mcpgw) and on the starts after it, when pi-mcp-adapter
// builds its tools from its metadata cache (a cached resource would become
// a read_* tool of its own). A resource is still read through the mcp
// tool.
func TestPiReadmeOneToolColdAndWarm(t *testing.T) {
	t.Parallel()
	needPi(t)
	e2e.NeedNode(t)
	node, args := e2e.EverythingStdio()
	e := newPiEnv(t, map[string]any{"everything": map[string]any{"command": node, "args": args}}, nil, nil, nil,
		e2e.ModelStep{Text: "done"},
		// warm: a resource, read through the mcp tool.
		e2e.ModelStep{ToolFrom: "mcp", Args: map[string]any{"tool": "everything_read_architecture_md"}},
		e2e.ModelStep{Text: "done"},
		e2e.ModelStep{Text: "done"},
	)
	e.usePiFile(readmePiFile(t, 0))
	e.warmDaemon("everything")
	want := []string{"mcpgw_mcp"}

	e.runPi("Nothing to do.")
	e2e.WaitCached(t, filepath.Join(e.home, ".pi", "agent", "mcp-cache.json"), "everything", "mcpgw")
	e.runPi("Read the architecture notes.")
	e.runPi("Nothing to do.")
	reqs := e.model.Requests()
	for i, r := range reqs {
		t.Logf("request %d tools %v", i, r.Tools)
	}
	if len(reqs) != 4 {
		t.Fatalf("the model was asked %d times, want 4", len(reqs))
	}
	if got := reqs[2].LastToolResult(); !strings.Contains(strings.ToLower(got), "architecture") {
		t.Errorf("reading a resource through the mcp tool gave %q", got)
	}
	for i, name := range []string{"first start", "second start", "second start", "third start"} {
		if got := mcpToolsOffered(reqs[i]); !slices.Equal(got, want) {
			t.Errorf("%s: the model is offered %v besides Pi's own tools, want %v", name, got, want)
		}
	}
}

// TestPiReadmeImportOneRoute: the README's Pi file for servers mcpgw
// imports from it, exactly, with server-everything in it: the adapter
// offers the model no route of its own to everything beside mcpgw's, on
// the first start or after it.
func TestPiReadmeImportOneRoute(t *testing.T) {
	t.Parallel()
	needPi(t)
	e2e.NeedNode(t)
	e := newPiEnv(t, nil, nil, nil, nil,
		e2e.ModelStep{ToolFrom: "mcp", Args: map[string]any{"tool": "everything_echo", "args": map[string]any{"message": "imported"}}},
		e2e.ModelStep{Text: "done"},
		e2e.ModelStep{Text: "done"},
	)
	cfg := readmePiFile(t, 1)
	entry, _ := cfg["mcpServers"].(map[string]any)["everything"].(map[string]any)
	if entry == nil {
		t.Fatalf("the README's import snippet has no everything entry: %v", cfg)
	}
	entry["command"], entry["args"] = e2e.EverythingStdio()
	e.usePiFile(cfg)
	e2e.WriteJSON(t, e.config, map[string]any{"imports": []string{"pi"}})
	e.warmDaemon("everything")

	e.runPi("Echo once.")
	e2e.WaitCached(t, filepath.Join(e.home, ".pi", "agent", "mcp-cache.json"), "everything", "mcpgw")
	e.runPi("Nothing to do.")
	reqs := e.model.Requests()
	for i, r := range reqs {
		t.Logf("request %d tools %v", i, r.Tools)
	}
	if len(reqs) != 3 {
		t.Fatalf("the model was asked %d times, want 3", len(reqs))
	}
	if got := reqs[1].LastToolResult(); !strings.Contains(got, "Echo: imported") {
		t.Errorf("the imported server's tool through mcpgw gave %q", got)
	}
	want := []string{"mcpgw_mcp"}
	for i, name := range []string{"first start", "first start", "second start"} {
		if got := mcpToolsOffered(reqs[i]); !slices.Equal(got, want) {
			t.Errorf("%s: the model is offered %v besides Pi's own tools, want %v", name, got, want)
		}
	}
}
