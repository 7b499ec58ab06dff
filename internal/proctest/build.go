package proctest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
)

var builds struct {
	mu   sync.Mutex
	done map[string]*build
}

type build struct {
	once sync.Once
	path string
	err  error
}

// Build builds the main package pkg (a directory, relative to the working
// directory, or an import path) with the go command and returns the
// binary's path. Every test that runs a binary of this module gets it from
// here: it is built once per test process for each pkg and race, with -race
// when race is set, and replaced atomically in a per-user directory keyed
// by the package's location, so repeated and concurrent runs of the same
// tree share one file instead of leaving one each. Safe for concurrent use.
func Build(pkg string, race bool) (string, error) {
	key := fmt.Sprintf("%s race=%v", pkg, race)
	if !filepath.IsAbs(pkg) && (pkg == "." || pkg[0] == '.') {
		abs, err := filepath.Abs(pkg)
		if err != nil {
			return "", err
		}
		key = fmt.Sprintf("%s race=%v", abs, race)
	}
	builds.mu.Lock()
	if builds.done == nil {
		builds.done = make(map[string]*build)
	}
	b, ok := builds.done[key]
	if !ok {
		b = new(build)
		builds.done[key] = b
	}
	builds.mu.Unlock()
	b.once.Do(func() { b.path, b.err = goBuild(pkg, race, key) })
	return b.path, b.err
}

func goBuild(pkg string, race bool, key string) (string, error) {
	sum := sha256.Sum256([]byte(key))
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("mcpgw-test-bin-%d", os.Getuid()), hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	name := filepath.Base(pkg)
	if name == "." || name == "/" {
		wd, _ := os.Getwd()
		name = filepath.Base(wd)
	}
	// Without the profile-guided optimization of cmd/mcpgw's default.pgo:
	// it changes what the compiler inlines, not what the program does, and
	// every package built again with it made a build with -race take 73 s
	// instead of 10 (the tests' own packages are in the cache already).
	flags := []string{"build", "-pgo=off"}
	if race {
		flags = append(flags, "-race")
	}
	tmp, err := os.CreateTemp(dir, name+".tmp*")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name()) // a no-op once renamed
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	cmd := exec.Command(goTool, append(flags, "-o", tmp.Name(), pkg)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %w\n%s", cmd, err, out)
	}
	path := filepath.Join(dir, name)
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	return path, nil
}

// RaceEnabled reports whether the running binary was built with -race.
func RaceEnabled() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	return slices.ContainsFunc(info.Settings, func(s debug.BuildSetting) bool {
		return s.Key == "-race" && s.Value == "true"
	})
}
