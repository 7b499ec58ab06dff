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

// command is what the daemon runs for srv with the environment env: an
// npx package found in npm's cache runs directly (its bin directory first
// on PATH, as npx does); a bare name is looked up on env's PATH (which the
// server's own env may set); a path runs as written, relative to the
// server's working directory. A name not found is returned as written.
func command(srv *registry.Server, env []string) (name string, args []string, outEnv []string) {
	if r, ok := resolveNpx(srv.Command, srv.Args, env); ok {
		return r.Command, r.Args, prependPath(env, r.BinDir)
	}
	name = srv.Command
	if !strings.Contains(name, string(filepath.Separator)) {
		if path, ok := envValue(env, "PATH"); ok {
			if found, err := lookPathIn(name, path); err == nil {
				name = found
			}
		}
	}
	return name, srv.Args, env
}

// ResolveCommand finds the program a stdio server's command runs, the way
// the daemon does when it starts it (command), with path as the daemon's
// PATH. The error says what is missing.
func ResolveCommand(srv *registry.Server, path string) (string, error) {
	env := []string{"PATH=" + path, "HOME=" + os.Getenv("HOME")}
	for _, k := range []string{"npm_config_cache", "NPM_CONFIG_CACHE"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	name, _, env := command(srv, mergeEnv(env, srv.Env))
	if !strings.Contains(name, string(filepath.Separator)) {
		p, _ := envValue(env, "PATH")
		return lookPathIn(name, p) // not found: its error
	}
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
