//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestBashCompletion sources the bash completion script and completes a
// subcommand and, from the config, server names.
func TestBashCompletion(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	// The script calls mcpgw by name: put it on PATH as that (a race
	// build has another name).
	binDir := t.TempDir()
	if err := os.Symlink(e2e.BuildMcpgw(t), filepath.Join(binDir, "mcpgw")); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".config", "mcpgw"), 0o700)
	os.WriteFile(filepath.Join(home, ".config", "mcpgw", "mcp.json"),
		[]byte(`{"mcpServers":{"github":{"url":"https://x.example/mcp"},"linear":{"url":"https://y.example/mcp","auth":"oauth"}}}`), 0o600)
	script := `source <(mcpgw completion bash)
complete_line() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _mcpgw; echo "${COMPREPLY[*]}"; }
complete_line mcpgw con
complete_line mcpgw login li
complete_line mcpgw tools --server ""
complete_line mcpgw service u`
	cmd := exec.Command(bash, "-c", script)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "PATH="+binDir+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := "connect\nlinear\ngithub linear\nuninstall\n"
	if string(out) != want {
		t.Errorf("completions:\n%s\nwant:\n%s", out, want)
	}
	for _, shell := range []string{"zsh", "fish"} {
		var b strings.Builder
		if err := completionCmd([]string{shell}, &b); err != nil || !strings.Contains(b.String(), "__servers") {
			t.Errorf("%s script: %v\n%s", shell, err, b.String())
		}
	}
}
