package upstream

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpgw/mcpgw/registry"
)

// workDir is the directory srv's command runs in: its cwd, else the
// user's home directory — never the daemon's own working directory, which
// is whatever directory the session that started it happened to be in.
func workDir(srv *registry.Server) string {
	if srv.Cwd != "" {
		return srv.Cwd
	}
	if home, err := os.UserHomeDir(); err == nil {
		if fi, err := os.Stat(home); err == nil && fi.IsDir() {
			return home
		}
	}
	return "/"
}

// ResolveCommand finds the program a stdio server's command runs, the way
// the daemon does when it starts it: path is the daemon's PATH (the
// server's own env may override it); npx commands whose package is in
// npm's cache run the package directly; a command with a directory is
// taken relative to the server's working directory. The error says what is
// missing.
func ResolveCommand(srv *registry.Server, path string) (string, error) {
	env := mergeEnv([]string{"PATH=" + path, "HOME=" + os.Getenv("HOME")}, srv.Env)
	for _, k := range []string{"npm_config_cache", "NPM_CONFIG_CACHE"} {
		if v, ok := os.LookupEnv(k); ok {
			env = mergeEnv(env, map[string]string{k: v})
		}
	}
	if r, ok := resolveNpx(srv.Command, srv.Args, env); ok {
		return r.Command, nil
	}
	name := srv.Command
	if strings.Contains(name, string(filepath.Separator)) {
		if !filepath.IsAbs(name) {
			name = filepath.Join(workDir(srv), name)
		}
		fi, err := os.Stat(name)
		if err != nil {
			return "", fmt.Errorf("%s does not exist", name)
		}
		if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s is not an executable file", name)
		}
		return name, nil
	}
	p, _ := envValue(env, "PATH")
	return lookPathIn(name, p)
}

// InstallHint says how to get a command that is not found: where the
// common launchers (npx, uvx, docker, ...) come from.
func InstallHint(command string) string {
	switch filepath.Base(command) {
	case "npx", "npm", "node", "pnpm", "yarn":
		return "install Node.js (https://nodejs.org/) or put its bin directory on that PATH"
	case "uvx", "uv":
		return "install uv (https://docs.astral.sh/uv/getting-started/installation/)"
	case "docker":
		return "install Docker (https://docs.docker.com/get-started/get-docker/)"
	case "python", "python3", "pip", "pipx":
		return "install Python (https://www.python.org/downloads/)"
	case "bun", "bunx":
		return "install Bun (https://bun.sh/)"
	case "deno":
		return "install Deno (https://deno.com/)"
	}
	return "install it, or give its full path"
}
