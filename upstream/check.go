package upstream

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpgw/mcpgw/registry"
)

// CheckWarnings returns the config's warnings and, for each server, what
// would stop it from starting: arguments relative to a directory it will
// not run in, and a stdio command that is not on path (the daemon's PATH,
// which from describes), with how to get it.
func CheckWarnings(cfg *registry.Config, path, from string) []string {
	warnings := slices.Clone(cfg.Warnings)
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		srv := cfg.Servers[name]
		if rel := srv.RelativeArgs(); len(rel) > 0 {
			warnings = append(warnings, fmt.Sprintf("mcpServers.%s.args: %s is relative, and the server runs in your home directory for every session; set cwd, or define it in a project's .mcp.json to run it in the project", name, strings.Join(rel, ", ")))
		}
		if w := commandWarning(name, srv, path, from); w != "" {
			warnings = append(warnings, w)
		}
	}
	return warnings
}

// commandWarning says what is wrong with an enabled stdio server's command
// on the daemon's PATH, if anything, and how to fix it.
func commandWarning(name string, srv *registry.Server, path, from string) string {
	if srv.IsRemote() || !srv.Enabled || srv.Untrusted || srv.Command == "" {
		return ""
	}
	_, err := ResolveCommand(srv, path)
	switch {
	case err == nil:
		return ""
	case strings.ContainsRune(srv.Command, filepath.Separator):
		return fmt.Sprintf("mcpServers.%s.command: %v", name, err)
	}
	msg := fmt.Sprintf("mcpServers.%s.command: %q is not on the daemon's PATH, %s", name, srv.Command, from)
	if found, err := exec.LookPath(srv.Command); err == nil && os.Getenv("PATH") != path {
		return msg + fmt.Sprintf("; this shell has it (%s): run `mcpgw service install` again to give the service this shell's PATH", found)
	}
	return msg + "; " + InstallHint(srv.Command)
}
