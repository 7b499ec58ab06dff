package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/tailscale/hujson"
)

// Default timings of Watch.
const (
	DefaultWatchDebounce = 200 * time.Millisecond
	DefaultWatchMaxDelay = 2 * time.Second
)

// WatchOptions configure Watch. A nil *WatchOptions means defaults.
type WatchOptions struct {
	// Debounce is how long the files must stay quiet after a change before
	// reload is called: an editor's save is several events (write, rename,
	// chmod), and a tool may write a file in pieces. Default
	// DefaultWatchDebounce.
	Debounce time.Duration
	// MaxDelay bounds the wait when changes keep coming (a tool that
	// rewrites its file every few hundred milliseconds): reload is called
	// at most this long after the first change of a burst. Default
	// DefaultWatchMaxDelay.
	MaxDelay time.Duration
	Logger   *slog.Logger // nil = discard
	// Resync, when a value is received from it, makes Watch call files
	// again: for reloads that came from elsewhere (SIGHUP, an HTTP
	// request) and changed the set.
	Resync <-chan struct{}
}

// Watch calls reload whenever one of the files that files returns is
// created, written, replaced or removed, until ctx is done; it returns nil
// then, and an error only when watching cannot start.
//
// It watches the files' directories, not the files: editors save by
// writing a temporary file and renaming it over the original, which a
// watch on the file itself would lose, and a file that does not exist yet
// (an import of a tool installed later) is seen when it is created. For a
// directory that does not exist either, the nearest existing parent is
// watched until it appears. A file that is a symbolic link is watched at
// its target too. Other files in those directories are ignored.
//
// Changes are debounced (see WatchOptions). reload is called from Watch's
// goroutine, one call at a time; after each call files is called again and
// the watches are updated, so the caller adds and drops files (new
// imports, project files of new sessions) by returning them. reload should
// compare content hashes and do nothing when nothing changed: Watch cannot
// tell a save of the same bytes from an edit.
func Watch(ctx context.Context, files func() []string, reload func(), opts *WatchOptions) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching config files: %w", err)
	}
	defer fw.Close()
	w := newWatcher(fw, files, reload, opts)
	w.sync()
	return w.run(ctx, fw.Events, fw.Errors)
}

// dirWatcher is the part of *fsnotify.Watcher the watcher uses; tests
// replace it to drive the debounce with synthetic events.
type dirWatcher interface {
	Add(name string) error
	Remove(name string) error
}

type watcher struct {
	fs       dirWatcher
	files    func() []string
	reload   func()
	debounce time.Duration
	maxDelay time.Duration
	log      *slog.Logger
	resync   <-chan struct{}

	wanted   map[string]bool // the files, and the targets of those that are links
	relevant map[string]bool // wanted, plus missing directories on the way to them
	dirs     map[string]bool // directories watched
	present  map[string]bool // wanted files that existed at the last sync
}

func newWatcher(fs dirWatcher, files func() []string, reload func(), opts *WatchOptions) *watcher {
	w := &watcher{fs: fs, files: files, reload: reload, debounce: DefaultWatchDebounce, maxDelay: DefaultWatchMaxDelay, dirs: map[string]bool{}}
	if opts != nil {
		if opts.Debounce > 0 {
			w.debounce = opts.Debounce
		}
		if opts.MaxDelay > 0 {
			w.maxDelay = opts.MaxDelay
		}
		w.log = opts.Logger
		w.resync = opts.Resync
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	w.maxDelay = max(w.maxDelay, w.debounce)
	return w
}

// sync makes the watched directories match files(). It reports whether a
// wanted file appeared or vanished since the last sync: a file created in a
// directory before its watch was in place sends no event of its own.
func (w *watcher) sync() (changed bool) {
	wanted := map[string]bool{}
	relevant := map[string]bool{}
	dirs := map[string]bool{}
	for _, f := range w.files() {
		if f == "" {
			continue
		}
		f = filepath.Clean(f)
		paths := []string{f}
		if real, err := filepath.EvalSymlinks(f); err == nil && real != f {
			paths = append(paths, real)
		}
		for _, p := range paths {
			wanted[p], relevant[p] = true, true
			d := filepath.Dir(p)
			for {
				if fi, err := os.Stat(d); err == nil && fi.IsDir() {
					break
				}
				relevant[d] = true
				parent := filepath.Dir(d)
				if parent == d {
					break
				}
				d = parent
			}
			dirs[d] = true
		}
	}
	for _, d := range slices.Sorted(maps.Keys(w.dirs)) {
		if !dirs[d] {
			_ = w.fs.Remove(d) // fails harmlessly when d is gone
		}
	}
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		if w.dirs[d] {
			continue
		}
		if err := w.fs.Add(d); err != nil {
			w.log.Warn("cannot watch config directory; changes there need a reload (SIGHUP)", "dir", d, "err", err)
			delete(dirs, d)
		}
	}
	present := map[string]bool{}
	for f := range wanted {
		if _, err := os.Stat(f); err == nil {
			present[f] = true
		}
	}
	if w.present != nil && !maps.Equal(present, w.present) {
		changed = true
	}
	w.wanted, w.relevant, w.dirs, w.present = wanted, relevant, dirs, present
	return changed
}

// run is Watch's loop over the watcher's events.
func (w *watcher) run(ctx context.Context, events <-chan fsnotify.Event, errs <-chan error) error {
	var (
		timer  *time.Timer
		timerC <-chan time.Time
		first  time.Time
	)
	schedule := func() {
		now := time.Now()
		if timer == nil {
			first = now
			timer = time.NewTimer(w.debounce)
			timerC = timer.C
			return
		}
		timer.Reset(max(0, min(w.debounce, w.maxDelay-now.Sub(first))))
	}
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				return errors.New("config file watcher closed")
			}
			if ev.Op&^fsnotify.Chmod == 0 {
				continue // attribute changes: touch, chmod
			}
			if !w.relevant[ev.Name] && !w.dirs[ev.Name] {
				continue
			}
			w.log.Debug("config file changed", "path", ev.Name, "op", ev.Op.String())
			if !w.wanted[ev.Name] {
				w.sync() // a directory on the way appeared or went
			}
			schedule()
		case err, ok := <-errs:
			if !ok {
				return errors.New("config file watcher closed")
			}
			// Typically a queue overflow: events were lost, so look again.
			w.log.Warn("watching config files", "err", err)
			schedule()
		case <-w.resync:
			if w.sync() {
				schedule()
			}
		case <-timerC:
			timer, timerC = nil, nil
			w.reload()
			if w.sync() {
				schedule() // a file appeared while the watches were moving
			}
		}
	}
}

// Changes lists the servers that differ between two configs, by name:
// added, removed, and changed (another identity hash, or another
// behaviour: enabled, lifecycle, timeouts...). Each list is sorted.
func Changes(old, new *Config) (added, changed, removed []string) {
	for name, s := range new.Servers {
		o, ok := old.Servers[name]
		switch {
		case !ok:
			added = append(added, name)
		case o.Hash != s.Hash || !sameBehaviour(o, s):
			changed = append(changed, name)
		}
	}
	for name := range old.Servers {
		if _, ok := new.Servers[name]; !ok {
			removed = append(removed, name)
		}
	}
	slices.Sort(added)
	slices.Sort(changed)
	slices.Sort(removed)
	return added, changed, removed
}

func sameBehaviour(a, b *Server) bool {
	return a.Enabled == b.Enabled && a.Untrusted == b.Untrusted && a.Lifecycle == b.Lifecycle && a.Isolation == b.Isolation && a.MaxConcurrency == b.MaxConcurrency &&
		a.IdleTimeout == b.IdleTimeout && a.RequestTimeout == b.RequestTimeout &&
		a.StartupTimeout == b.StartupTimeout && a.ToolPrefix == b.ToolPrefix &&
		a.Description == b.Description && slices.Equal(a.DirectTools, b.DirectTools) &&
		(a.DirectTools == nil) == (b.DirectTools == nil) && a.Source == b.Source
}

// WatchFiles returns the files Load(path, opts) reads, as far as they can
// be known without loading: the config file, the files of the imports it
// lists (even when other parts of it are invalid) and the trust store.
// After a failed load, watch these rather than the last good Config.Files:
// the file that broke may be a new import's.
func WatchFiles(path string, opts *LoadOptions) []string {
	if path == "" {
		path = defaultConfigPath(opts)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	files := []string{path}
	if data, err := readConfigFile(path); err == nil {
		if v, err := hujson.Parse(append(bytes.Clone(data), '\n')); err == nil {
			if obj, ok := v.Value.(*hujson.Object); ok {
				for _, m := range obj.Members {
					if hujsonString(m.Name) != "imports" {
						continue
					}
					arr, ok := m.Value.Value.(*hujson.Array)
					if !ok {
						continue
					}
					for _, e := range arr.Elements {
						for _, c := range importCandidates(hujsonString(e), opts) {
							files = appendNew(files, c.path)
						}
					}
				}
			}
		}
	}
	if opts != nil && opts.TrustFile != "" {
		if abs, err := filepath.Abs(opts.TrustFile); err == nil {
			files = appendNew(files, abs)
		}
	}
	return files
}
