package upstream

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// mergeEnv returns base with the entries of extra set (replacing any
// existing value of the same name).
func mergeEnv(base []string, extra map[string]string) []string {
	if len(extra) == 0 {
		return base
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := extra[k]; !ok {
			out = append(out, kv)
		}
	}
	for k, v := range extra {
		out = append(out, k+"="+v)
	}
	return out
}

// envValue returns the last value of name in env.
func envValue(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// prependPath puts dir first on env's PATH.
func prependPath(env []string, dir string) []string {
	if dir == "" {
		return env
	}
	path, _ := envValue(env, "PATH")
	if path != "" {
		path = dir + string(filepath.ListSeparator) + path
	} else {
		path = dir
	}
	return mergeEnv(env, map[string]string{"PATH": path})
}

// lookPathIn finds an executable named name in the directories of path.
func lookPathIn(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q: %w", name, exec.ErrNotFound)
}
