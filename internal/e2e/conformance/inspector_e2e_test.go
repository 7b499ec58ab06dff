//go:build linux

package conformance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestInspectorCLI drives the daemon with the MCP Inspector's CLI, over
// Streamable HTTP and through `mcpgw stdio`: it lists and gets an
// upstream's prompts, and lists and reads its resources and templates.
func TestInspectorCLI(t *testing.T) {
	t.Parallel()
	node22, _ := needConformance(t)
	cli := e2e.Path("node_modules/@modelcontextprotocol/inspector-cli/build/index.js")
	if _, err := os.Stat(cli); err != nil {
		t.Fatalf("inspector CLI not installed (%v); install with: %s", err, e2e.NPMInstallHint)
	}
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"fixtures": map[string]any{"command": e2e.TestServerBin, "args": []string{"conformance-upstream"}},
	}, nil)
	d := e2e.StartDaemon(t, dir, config)
	targets := map[string][]string{
		"http":  {d.MCPURL()},
		"stdio": {e2e.BuildMcpgw(t), "stdio", "--socket", d.Socket, "--no-start"},
	}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--method", "prompts/list"}, []string{`"fixtures_test_simple_prompt"`, `"fixtures_test_prompt_with_arguments"`, `"arg1"`}},
		{[]string{"--method", "prompts/get", "--prompt-name", "fixtures_test_prompt_with_arguments", "--prompt-args", "arg1=one", "arg2=two"},
			[]string{`Prompt with arguments: arg1='one', arg2='two'`}},
		{[]string{"--method", "resources/list"}, []string{`"test://static-text"`, `"test://static-binary"`}},
		{[]string{"--method", "resources/read", "--uri", "test://static-text"}, []string{"This is the content of the static text resource."}},
		{[]string{"--method", "resources/templates/list"}, []string{`"test://template/{id}/data"`}},
		{[]string{"--method", "resources/read", "--uri", "test://template/42/data"}, []string{`Data for ID: 42`}},
	}
	for name, target := range targets {
		for i, c := range cases {
			// Each run is a client of its own: they go at once.
			t.Run(fmt.Sprintf("%s/%d-%s", name, i, c.args[1]), func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), e2e.WaitLimit)
				defer cancel()
				cmd := exec.CommandContext(ctx, node22, append(append([]string{cli}, target...), c.args...)...)
				cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_RUNTIME_DIR="+dir+"/run")
				// The CLI finds its own package.json by testing a path
				// relative to the working directory and importing it
				// relative to itself: run it where both agree.
				cmd.Dir = e2e.Path("node_modules")
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("inspector %s: %v\n%s", strings.Join(c.args, " "), err, out)
				}
				for _, w := range c.want {
					if !strings.Contains(string(out), w) {
						t.Errorf("inspector %s: output lacks %s:\n%s", strings.Join(c.args, " "), w, out)
					}
				}
			})
		}
	}
}
