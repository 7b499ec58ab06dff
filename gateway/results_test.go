package gateway

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// TestBigResultsAreSavedNotDropped: a result past maxOutputBytes is cut,
// saved whole (0600), and mcp({read}) gives the rest range by range until
// the pieces make the whole; a client that reads files gets the path.
func TestBigResultsAreSavedNotDropped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := &registry.Config{Servers: map[string]*registry.Server{"alpha": fakeupstream.Server("alpha", nil)},
		Settings: registry.Settings{ToolPrefix: registry.PrefixServer, MaxOutputBytes: 1000}}
	gw := New(cfg, &Options{NoBootstrap: true, ResultsDir: filepath.Join(dir, "results")})
	t.Cleanup(func() { gw.Close() })
	gw.Start()
	connectNow(t, gw, "alpha")
	var lines []string
	for i := range 300 {
		lines = append(lines, fmt.Sprintf("line %03d é", i))
	}
	whole := strings.Join(lines, "\n")
	c := connect(t, gw, SessionOptions{})
	text, isErr := c.call(t, "mcp", map[string]any{"tool": "alpha_echo", "args": map[string]any{"message": whole}})
	note := regexp.MustCompile(`\[output cut by mcpgw: (\d+) of (\d+) bytes shown\. The whole result is saved as (r-[0-9a-f]+\.txt): read on with mcp\(\{read: "r-[0-9a-f]+\.txt", offset: (\d+)\}\), or read the file (\S+)\.\]`)
	m := note.FindStringSubmatch(text)
	if isErr || m == nil {
		t.Fatalf("cut result:\n%s", text)
	}
	id, path := m[3], m[5]
	if m[2] != strconv.Itoa(len(whole)) || m[1] != m[4] || !strings.HasPrefix(whole, strings.TrimSuffix(text[:strings.Index(text, "[output cut")], "\n")) {
		t.Errorf("note %q for a %d-byte result", m[0], len(whole))
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("saved file %s: %v %v", path, info, err)
	}
	offset, _ := strconv.Atoi(m[4])
	got := whole[:offset]
	for range 20 {
		page, isErr := c.call(t, "mcp", map[string]any{"read": id, "offset": offset, "limit": 700})
		head, body, _ := strings.Cut(page, "\n")
		if isErr || !strings.HasPrefix(head, fmt.Sprintf("[%s: bytes %d–", id, offset)) {
			t.Fatalf("read at %d: %s", offset, page)
		}
		got += body
		offset += len(body)
		if !strings.Contains(head, "read on with") {
			break
		}
	}
	if got != whole {
		t.Errorf("the pieces do not make the whole: %d bytes of %d", len(got), len(whole))
	}
	if text, isErr := c.call(t, "mcp", map[string]any{"read": "../../etc/passwd"}); !isErr || !strings.Contains(text, "No saved result") {
		t.Errorf("reading outside: %q", text)
	}
	// Direct mode: the note names the file.
	d := connect(t, gw, SessionOptions{Mode: ModeDirect})
	d.tools(t)
	if text, _ := d.call(t, "alpha_echo", map[string]any{"message": whole}); !strings.Contains(text, "or read the file "+filepath.Join(dir, "results")) {
		t.Errorf("direct mode's cut result lacks the path: %s", text[max(0, len(text)-300):])
	}
	// A script reads the whole result: it has its own budget.
	text, _ = c.call(t, "mcp", map[string]any{"script": `return (await tools.call("alpha_echo", {message: "x".repeat(5000)})).data.length`})
	if a := decodeScript(t, text); string(a.Result) != "5000" {
		t.Errorf("script: %s", text)
	}
}
