package chartest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/registry"
)

// TestRenderedConfigLoads: the mcp.json each golden case renders is one
// mcpgw loads, with its servers, and with no warning.
func TestRenderedConfigLoads(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := decode(t, mustRender(t, readValues(t, tc.values)).Manifest)
			path := filepath.Join(t.TempDir(), "mcp.json")
			if err := os.WriteFile(path, []byte(o.ConfigMap.Data["mcp.json"]), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := registry.Load(path, &registry.LoadOptions{
				Getenv: func(k string) string { return map[string]string{"GITHUB_TOKEN": "ghs_test"}[k] },
				Home:   t.TempDir(),
			})
			if err != nil {
				t.Fatalf("mcpgw does not load the rendered mcp.json: %v\n%s", err, o.ConfigMap.Data["mcp.json"])
			}
			var names []string
			for n := range cfg.Servers {
				names = append(names, n)
			}
			slices.Sort(names)
			want := map[string][]string{"default": nil, "team": {"github"}}[tc.name]
			if !slices.Equal(names, want) {
				t.Errorf("servers %v, want %v", names, want)
			}
			if gh := cfg.Servers["github"]; gh != nil && gh.Headers["Authorization"] != "Bearer ghs_test" {
				t.Errorf("github's Authorization header %q, want ${GITHUB_TOKEN} from the environment", gh.Headers["Authorization"])
			}
			if tc.name == "team" && (cfg.Team == nil || cfg.Team.Issuer == "" || cfg.Team.Audience == "") {
				t.Errorf("the team block did not load: %+v", cfg.Team)
			}
			for _, w := range cfg.Warnings {
				t.Errorf("warning: %s", w)
			}
		})
	}
}

// TestConfigMapReload: a ConfigMap mounted as a directory changes the way
// the kubelet changes it (atomicWriter, below), and mcpgw's watcher
// reloads each time. A subPath mount would never change at all.
func TestConfigMapReload(t *testing.T) {
	dir := t.TempDir()
	kubelet := &atomicWriter{t: t, dir: dir}
	kubelet.write(map[string]string{"mcp.json": `{"mcpServers": {"one": {"url": "http://one.platform.svc/mcp"}}}`})
	path := filepath.Join(dir, "mcp.json")

	load := func() *registry.Config {
		t.Helper()
		cfg, err := registry.Load(path, &registry.LoadOptions{Home: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	var files []string
	if cfg := load(); cfg.Servers["one"] == nil {
		t.Fatalf("servers %v, want one", cfg.Servers)
	} else {
		files = cfg.Files
	}
	reloads := make(chan struct{}, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- registry.Watch(ctx, func() []string { return files }, func() { reloads <- struct{}{} },
			&registry.WatchOptions{Debounce: 20 * time.Millisecond})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch: %v", err)
		}
	}()
	// Watch gives no sign that its watches are in place: write until a
	// reload comes (each write is a whole new version, as the kubelet's).
	for i, server := range []string{"two", "three"} {
		deadline := time.Now().Add(30 * time.Second)
		for reloaded := false; !reloaded; {
			kubelet.write(map[string]string{"mcp.json": `{"mcpServers": {"` + server + `": {"url": "http://x.platform.svc/mcp"}}}`})
			select {
			case <-reloads:
				reloaded = true
			case <-time.After(500 * time.Millisecond):
				if time.Now().After(deadline) {
					t.Fatalf("update %d: no reload", i+1)
				}
			}
		}
		cfg := load()
		if cfg.Servers[server] == nil || len(cfg.Servers) != 1 {
			t.Fatalf("update %d: servers %v, want %s alone", i+1, cfg.Servers, server)
		}
		files = cfg.Files
	}
}

// atomicWriter writes a ConfigMap's keys into a directory as the kubelet
// does (k8s.io/kubernetes pkg/volume/util, AtomicWriter.Write): the data
// in a new timestamped directory, a ..data symlink swapped to it by
// rename, each key a symlink through ..data, then the old directory
// removed.
type atomicWriter struct {
	t   *testing.T
	dir string
}

func (w *atomicWriter) write(files map[string]string) {
	t := w.t
	t.Helper()
	old, _ := os.Readlink(filepath.Join(w.dir, "..data"))
	ts, err := os.MkdirTemp(w.dir, time.Now().UTC().Format("..2006_01_02_15_04_05."))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(ts, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tmp := filepath.Join(w.dir, "..data_tmp")
	if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(w.dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		link := filepath.Join(w.dir, name)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join("..data", name), link); err != nil {
			t.Fatal(err)
		}
	}
	if old != "" {
		if err := os.RemoveAll(filepath.Join(w.dir, old)); err != nil {
			t.Fatal(err)
		}
	}
}
