//go:build unix

package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestSearchPrefersReplacementOfDeprecated: `mcpgw search read a file`
// with the real server-filesystem, which keeps read_file ("DEPRECATED:
// Use read_text_file instead") beside read_text_file, shows
// read_text_file in the first two results and the deprecated one after
// it (alone with its server, get_file_info, through read's synonym get,
// scores close to read_text_file).
func TestSearchPrefersReplacementOfDeprecated(t *testing.T) {
	t.Parallel()
	node := e2e.NeedNode(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{"filesystem": map[string]any{
		"command": node, "args": []string{e2e.Path("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"), dir},
	}}, nil)
	d := e2e.StartDaemon(t, dir, config)
	bin := e2e.BuildMcpgw(t)
	if out, err := exec.Command(bin, "connect", "--url", d.URL, "filesystem").CombinedOutput(); err != nil {
		t.Fatalf("mcpgw connect filesystem: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "search", "--url", d.URL, "read", "a", "file").CombinedOutput()
	if err != nil {
		t.Fatalf("mcpgw search: %v\n%s", err, out)
	}
	rank := map[string]int{}
	for i, l := range strings.Split(string(out), "\n")[1:] {
		if name, _, ok := strings.Cut(l, " - "); ok {
			rank[name] = i + 1
		}
	}
	newer, old := rank["filesystem_read_text_file"], rank["filesystem_read_file"]
	if newer == 0 || newer > 2 || old <= newer {
		t.Errorf("mcpgw search read a file ranks read_text_file #%d and the deprecated read_file #%d, want read_text_file in the first two, before read_file:\n%s", newer, old, out)
	}
}
