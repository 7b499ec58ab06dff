package upstream

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// npxResolution is the direct command line for an npx package.
type npxResolution struct {
	Command string   // node, or the binary itself
	Args    []string // the script (for node) and the package's arguments
	BinDir  string   // the install's node_modules/.bin, put first on PATH as npx does
}

// resolveNpx resolves `npx [-y] <package>[@version] [args...]` (or
// `npx --package <package> <bin> [args...]`) to the package's binary in npm's
// _npx cache (~/.npm/_npx/*/node_modules/<package>, or $npm_config_cache/_npx),
// run directly: with node for a JavaScript bin, as itself otherwise. Running it
// directly spares a ~140 MB npm process per server. ok is false, and the
// command should run as written, when anything is unusual: another command,
// an unknown npx flag, a non-registry spec (git, file, URL), a package not in
// the cache, no cached version satisfying the requested one (exact, ^, ~,
// x-ranges; other specs and dist-tags are left to npx), or no node on PATH.
// "latest" and no version take the newest install in the cache, which may
// be older than the registry's latest until npx itself runs again. env is the child's environment (for HOME, PATH and
// npm_config_cache).
func resolveNpx(command string, args []string, env []string) (res npxResolution, ok bool) {
	if base := filepath.Base(command); base != "npx" && base != "npx.cmd" {
		return res, false
	}
	pkg, bin, rest, ok := parseNpxArgs(args)
	if !ok {
		return res, false
	}
	name, version := splitPackageSpec(pkg)
	if name == "" || strings.ContainsAny(name, `:*?[]\`) || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "/") {
		return res, false
	}
	npxDir := npxCacheDir(env)
	if npxDir == "" {
		return res, false
	}
	dir, rel, ok := newestInstall(npxDir, name, version, bin)
	if !ok {
		return res, false
	}
	script := filepath.Join(dir, filepath.FromSlash(rel))
	fi, err := os.Stat(script)
	if err != nil || !fi.Mode().IsRegular() {
		return res, false
	}
	// .../_npx/<hash>/node_modules/<name>/ → .../_npx/<hash>/node_modules/.bin
	res.BinDir = filepath.Join(npxDir, installHash(npxDir, dir), "node_modules", ".bin")

	if isNodeScript(script) {
		path, _ := envValue(env, "PATH")
		node, err := lookPathIn("node", path)
		if err != nil {
			return res, false
		}
		res.Command, res.Args = node, append([]string{script}, rest...)
		return res, true
	}
	if fi.Mode()&0o111 == 0 {
		return res, false
	}
	res.Command, res.Args = script, append([]string(nil), rest...)
	return res, true
}

// parseNpxArgs reads npx's arguments: the package (-p, --package or the
// first argument), the binary when -p named the package, and the
// arguments for it. ok is false for flags it does not know.
func parseNpxArgs(args []string) (pkg, bin string, rest []string, ok bool) {
	i := 0
flags:
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-y" || a == "--yes" || a == "-q" || a == "--quiet" || a == "--silent" ||
			a == "--prefer-offline" || a == "--prefer-online" || a == "--no-install":
		case a == "-p" || a == "--package":
			if i+1 >= len(args) || pkg != "" {
				return "", "", nil, false
			}
			i++
			pkg = args[i]
		case strings.HasPrefix(a, "--package="):
			if pkg != "" {
				return "", "", nil, false
			}
			pkg = strings.TrimPrefix(a, "--package=")
		case a == "--":
			i++
			break flags
		case strings.HasPrefix(a, "-"):
			return "", "", nil, false
		default:
			break flags
		}
	}
	if i >= len(args) {
		return "", "", nil, false
	}
	if pkg == "" {
		pkg = args[i]
	} else {
		bin = args[i]
	}
	return pkg, bin, args[i+1:], true
}

// newestInstall finds, in npx's cache, the most recently installed copy
// of package name that meets version and has the binary bin (its default
// binary when bin is ""): its directory and the binary's path in it. ok is
// false when there is none, or when version is a spec it cannot judge.
func newestInstall(npxDir, name, version, bin string) (dir, rel string, ok bool) {
	matches, _ := filepath.Glob(filepath.Join(npxDir, "*", "node_modules", filepath.FromSlash(name), "package.json"))
	var mtime int64
	for _, m := range matches {
		fi, err := os.Stat(m)
		if err != nil {
			continue
		}
		var pj struct {
			Name    string          `json:"name"`
			Version string          `json:"version"`
			Bin     json.RawMessage `json:"bin"`
		}
		b, err := os.ReadFile(m)
		if err != nil || json.Unmarshal(b, &pj) != nil {
			continue
		}
		if ok, known := satisfies(pj.Version, version); !ok {
			if !known {
				return "", "", false // a spec we cannot judge: let npx decide
			}
			continue
		}
		r := pickBin(pj.Bin, name, bin)
		if r == "" {
			continue
		}
		if t := fi.ModTime().UnixNano(); dir == "" || t > mtime {
			dir, rel, mtime = filepath.Dir(m), r, t
		}
	}
	return dir, rel, dir != ""
}

// splitPackageSpec splits "name@version" / "@scope/name@version".
func splitPackageSpec(spec string) (name, version string) {
	at := strings.LastIndex(spec, "@")
	if at <= 0 { // no version, or only the scope's @
		return spec, ""
	}
	return spec[:at], spec[at+1:]
}

// npxCacheDir returns npm's _npx directory for env.
func npxCacheDir(env []string) string {
	for _, k := range []string{"npm_config_cache", "NPM_CONFIG_CACHE"} {
		if v, ok := envValue(env, k); ok && v != "" {
			return filepath.Join(v, "_npx")
		}
	}
	home, ok := envValue(env, "HOME")
	if !ok || home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return ""
		}
	}
	return filepath.Join(home, ".npm", "_npx")
}

// installHash returns the first path element of pkgDir below npxDir.
func installHash(npxDir, pkgDir string) string {
	rel, err := filepath.Rel(npxDir, pkgDir)
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return first
}

// pickBin chooses the package.json "bin" entry npx would run: the one named
// bin if given, else the only one, else the one named after the package.
func pickBin(raw json.RawMessage, name, bin string) string {
	unscoped := name[strings.LastIndex(name, "/")+1:]
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		if bin != "" && bin != unscoped {
			return ""
		}
		return s
	}
	var m map[string]string
	if json.Unmarshal(raw, &m) != nil || len(m) == 0 {
		return ""
	}
	if bin != "" {
		return m[bin]
	}
	if len(m) == 1 {
		for _, v := range m {
			return v
		}
	}
	return m[unscoped]
}

// isNodeScript reports whether path is JavaScript: by extension, or by a
// shebang that mentions node.
func isNodeScript(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".js", ".cjs", ".mjs":
		return true
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	return strings.HasPrefix(line, "#!") && strings.Contains(line, "node")
}

// satisfies reports whether the installed version meets spec, as npm's
// ranges do (exact, ^, ~, x-ranges, comparators, ||; a prerelease only
// where the range asks for prereleases); known is false for specs it
// cannot judge (dist-tags other than latest), which npx then resolves.
func satisfies(installed, spec string) (ok, known bool) {
	if spec == "" || spec == "latest" || spec == "*" {
		return true, true
	}
	v, err := semver.NewVersion(installed)
	if err != nil {
		return false, false
	}
	c, err := semver.NewConstraint(spec)
	if err != nil {
		return false, false
	}
	return c.Check(v), true
}
