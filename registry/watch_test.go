package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"
)

// fakeDirs is a dirWatcher that records what is watched.
type fakeDirs struct {
	mu      sync.Mutex
	watched []string
	log     []string // "+dir", "-dir"
}

func (f *fakeDirs) Add(d string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watched = append(f.watched, d)
	f.log = append(f.log, "+"+d)
	return nil
}

func (f *fakeDirs) Remove(d string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watched = slices.DeleteFunc(f.watched, func(x string) bool { return x == d })
	f.log = append(f.log, "-"+d)
	return nil
}

// debounceRig runs a watcher on synthetic events inside a synctest bubble
// and records the (fake) times at which reload was called.
type debounceRig struct {
	t       *testing.T
	events  chan fsnotify.Event
	errs    chan error
	reloads []time.Duration // since start
	start   time.Time
	files   []string
	dirs    *fakeDirs
	cancel  context.CancelFunc
	done    chan error
}

func startRig(t *testing.T, files []string, opts *WatchOptions) *debounceRig {
	r := &debounceRig{t: t, events: make(chan fsnotify.Event), errs: make(chan error), files: files, dirs: &fakeDirs{}, start: time.Now(), done: make(chan error, 1)}
	w := newWatcher(r.dirs, func() []string { return r.files }, func() { r.reloads = append(r.reloads, time.Since(r.start)) }, opts)
	w.sync()
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	t.Cleanup(cancel) // so that a failed test leaves no goroutine in the bubble
	go func() { r.done <- w.run(ctx, r.events, r.errs) }()
	return r
}

func (r *debounceRig) send(name string, op fsnotify.Op) {
	r.events <- fsnotify.Event{Name: name, Op: op}
	synctest.Wait()
}

// sleep advances the fake clock by d and lets the watcher run.
func (r *debounceRig) sleep(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

func (r *debounceRig) stop() {
	r.cancel()
	if err := <-r.done; err != nil {
		r.t.Errorf("run returned %v", err)
	}
}

func ms(n ...int) []time.Duration {
	out := make([]time.Duration, len(n))
	for i, x := range n {
		out[i] = time.Duration(x) * time.Millisecond
	}
	return out
}

func TestWatchDebounce(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	other := filepath.Join(dir, "notes.txt")

	t.Run("burst", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := startRig(t, []string{cfg}, nil)
			for range 5 { // an editor's save: several events, 50 ms apart
				r.send(cfg, fsnotify.Write)
				r.sleep(50 * time.Millisecond)
			}
			r.sleep(time.Second)
			r.stop()
			// Last event at 200 ms; quiet for 200 ms after it.
			if want := ms(400); !slices.Equal(r.reloads, want) {
				t.Errorf("reloads at %v, want %v", r.reloads, want)
			}
		})
	})
	t.Run("two saves", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := startRig(t, []string{cfg}, nil)
			r.send(cfg, fsnotify.Create)
			r.sleep(300 * time.Millisecond)
			r.send(cfg, fsnotify.Rename)
			r.sleep(time.Second)
			r.stop()
			if want := ms(200, 500); !slices.Equal(r.reloads, want) {
				t.Errorf("reloads at %v, want %v", r.reloads, want)
			}
		})
	})
	t.Run("ignored", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := startRig(t, []string{cfg}, nil)
			r.send(other, fsnotify.Write)                            // another file in the directory
			r.send(cfg, fsnotify.Chmod)                              // touch
			r.send(filepath.Join(dir, "mcp.json~"), fsnotify.Create) // an editor's backup
			r.sleep(time.Second)
			r.stop()
			if len(r.reloads) != 0 {
				t.Errorf("reloads at %v, want none", r.reloads)
			}
		})
	})
	t.Run("steady stream", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// A tool rewriting its file every 100 ms still gets reloaded,
			// every MaxDelay.
			r := startRig(t, []string{cfg}, &WatchOptions{Debounce: 200 * time.Millisecond, MaxDelay: time.Second})
			for range 25 {
				r.send(cfg, fsnotify.Write)
				r.sleep(100 * time.Millisecond)
			}
			r.sleep(time.Second)
			r.stop()
			if want := ms(1000, 2000, 2600); !slices.Equal(r.reloads, want) {
				t.Errorf("reloads at %v, want %v", r.reloads, want)
			}
		})
	})
	t.Run("watch error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := startRig(t, []string{cfg}, nil)
			r.errs <- fsnotify.ErrEventOverflow // events were lost: look again
			r.sleep(time.Second)
			r.stop()
			if want := ms(200); !slices.Equal(r.reloads, want) {
				t.Errorf("reloads at %v, want %v", r.reloads, want)
			}
		})
	})
}

// TestWatchSet: directories are watched, not files; a missing directory is
// watched through its nearest existing parent until it appears; the set
// follows files() after each reload.
func TestWatchSet(t *testing.T) {
	root := t.TempDir()
	cfg := writeFile(t, root, "config/mcp.json", "{}")
	later := filepath.Join(root, "tool", "sub", "mcp.json") // tool/ does not exist yet
	added := filepath.Join(root, "added", "x.json")
	if err := os.MkdirAll(filepath.Dir(added), 0o755); err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		r := startRig(t, []string{cfg, later}, nil)
		want := []string{"+" + root, "+" + filepath.Join(root, "config")}
		if !slices.Equal(r.dirs.log, want) {
			t.Fatalf("watch log %q, want %q", r.dirs.log, want)
		}
		// tool/ appears: its creation counts, and the watch moves to it.
		if err := os.MkdirAll(filepath.Join(root, "tool", "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		r.send(filepath.Join(root, "tool"), fsnotify.Create)
		want = append(want, "-"+root, "+"+filepath.Join(root, "tool", "sub"))
		if !slices.Equal(r.dirs.log, want) {
			t.Fatalf("after mkdir: watch log %q, want %q", r.dirs.log, want)
		}
		r.sleep(time.Second)
		if len(r.reloads) != 1 {
			t.Errorf("%d reloads after the directory appeared, want 1", len(r.reloads))
		}
		// A reload that adds a file (a new import) adds its directory.
		r.files = []string{cfg, added}
		r.send(cfg, fsnotify.Write)
		r.sleep(time.Second)
		want = append(want, "-"+filepath.Join(root, "tool", "sub"), "+"+filepath.Join(root, "added"))
		if !slices.Equal(r.dirs.log, want) {
			t.Errorf("after the set changed: watch log %q, want %q", r.dirs.log, want)
		}
		r.send(added, fsnotify.Create)
		r.sleep(time.Second)
		r.stop()
		if len(r.reloads) != 3 {
			t.Errorf("%d reloads, want 3", len(r.reloads))
		}
	})
}

// TestWatchFiles runs Watch on real files: an editor's atomic save, a file
// created in a directory that did not exist, and an edit through a
// symbolic link are each seen.
func TestWatchFiles(t *testing.T) {
	root := t.TempDir()
	cfg := writeFile(t, root, "config/mcp.json", `{}`)
	later := filepath.Join(root, "cursor", "mcp.json")
	target := writeFile(t, root, "dotfiles/claude.json", `{}`)
	link := filepath.Join(root, "home", ".claude.json")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	reloads := make(chan struct{}, 10)
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer fw.Close()
	w := newWatcher(fw, func() []string { return []string{cfg, later, link} }, func() { reloads <- struct{}{} }, &WatchOptions{Debounce: 20 * time.Millisecond})
	w.sync() // as Watch does, but the test knows when the watches are in place
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.run(ctx, fw.Events, fw.Errors) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	wait := func(what string) {
		t.Helper()
		select {
		case <-reloads:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no reload", what)
		}
	}

	tmp := filepath.Join(root, "config", ".mcp.json.swp")
	if err := os.WriteFile(tmp, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, cfg); err != nil {
		t.Fatal(err)
	}
	wait("atomic save")

	writeFile(t, root, "cursor/mcp.json", `{}`)
	wait("file in a new directory")

	if err := os.WriteFile(target, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	wait("edit through a link")
}

func TestWatchCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Watch(ctx, func() []string { return []string{filepath.Join(t.TempDir(), "x")} }, func() {}, nil)
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("Watch after cancel: %v", err)
	}
}

func TestChanges(t *testing.T) {
	old := &Config{Servers: map[string]*Server{
		"same":    {Name: "same", Hash: "h1", Enabled: true},
		"edited":  {Name: "edited", Hash: "h2", Enabled: true},
		"toggled": {Name: "toggled", Hash: "h3", Enabled: true},
		"gone":    {Name: "gone", Hash: "h4", Enabled: true},
	}}
	next := &Config{Servers: map[string]*Server{
		"same":    {Name: "same", Hash: "h1", Enabled: true},
		"edited":  {Name: "edited", Hash: "h2b", Enabled: true},
		"toggled": {Name: "toggled", Hash: "h3", Enabled: false},
		"new":     {Name: "new", Hash: "h5", Enabled: true},
	}}
	added, changed, removed := Changes(old, next)
	if !slices.Equal(added, []string{"new"}) || !slices.Equal(changed, []string{"edited", "toggled"}) || !slices.Equal(removed, []string{"gone"}) {
		t.Errorf("Changes = %q, %q, %q", added, changed, removed)
	}
}

func TestWatchResync(t *testing.T) {
	root := t.TempDir()
	a := writeFile(t, root, "a/mcp.json", "{}")
	b := writeFile(t, root, "b/mcp.json", "{}")
	synctest.Test(t, func(t *testing.T) {
		resync := make(chan struct{})
		r := startRig(t, []string{a}, &WatchOptions{Resync: resync})
		r.files = []string{a, b}
		resync <- struct{}{}
		synctest.Wait()
		r.stop()
		want := []string{"+" + filepath.Join(root, "a"), "+" + filepath.Join(root, "b")}
		if !slices.Equal(r.dirs.log, want) || len(r.reloads) != 0 {
			t.Errorf("watch log %q, reloads %v; want %q and none", r.dirs.log, r.reloads, want)
		}
	})
}

// TestWatchFiles lists what a load reads even when the load fails.
func TestWatchFilesOfBrokenConfig(t *testing.T) {
	home := t.TempDir()
	config := writeFile(t, home, "mcp.json", `{"imports": ["codex", "nope"], "mcpServers": {"a": {"lifecycle": 3}}}`)
	opts := &LoadOptions{Home: home, Getenv: func(string) string { return "" }, TrustFile: filepath.Join(home, "trust.json")}
	if _, err := Load(config, opts); err == nil {
		t.Fatal("the config loads; the test wants a broken one")
	}
	want := []string{config, filepath.Join(home, ".codex/config.toml"), filepath.Join(home, ".codex/config.json"), filepath.Join(home, "trust.json")}
	if got := WatchFiles(config, opts); !slices.Equal(got, want) {
		t.Errorf("WatchFiles = %q, want %q", got, want)
	}
	writeFile(t, home, "mcp.json", `{"imports": ["codex"`)
	if got := WatchFiles(config, opts); !slices.Equal(got, []string{config, filepath.Join(home, "trust.json")}) {
		t.Errorf("WatchFiles of a file that does not parse = %q", got)
	}
}
