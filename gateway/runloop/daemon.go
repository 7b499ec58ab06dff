// Package runloop is the daemon's run loop around the hub: Serve opens
// the listeners and wires the process to them (SIGHUP, sd_notify, config
// watching, the CPU and memory it settles on), and Daemon serves them and
// reloads the configuration, one reload at a time, until its context ends.
//
// It imports gateway and sees the hub as Hub (a *gateway.Hub); gateway
// does not import it.
package runloop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mcpgw/mcpgw/gateway"
	"github.com/mcpgw/mcpgw/registry"
)

// Hub is what the run loop asks of the session hub (*gateway.Hub).
//
// Which goroutine calls what: Start, Handler and SocketHTTP are called
// once each by Run before it serves; ServeSocket runs in a goroutine of
// its own until its context ends; Reload, RefreshProjects, RecordReload
// and RecordNoConfig are called by one reload at a time (Daemon.Reload,
// from the SIGHUP and watcher goroutines and from HTTP handlers, holds
// the daemon's lock around them; NewDaemon calls RecordNoConfig before
// Run), and ProjectFiles under that same lock by the watcher; Activity
// from the memory-settling goroutine at any time; Close once everything
// Run served has stopped, and perhaps again by Serve (it must be safe
// twice). The handlers Handler returns run concurrently with all of it.
type Hub interface {
	// Start loads the cached listings, connects the eager upstreams and
	// discovers the tools of servers not cached yet.
	Start()
	// Handler is the daemon's HTTP surface; SocketHTTP the listener of
	// the HTTP connections that arrive on the unix socket, to be served
	// by the same http.Server.
	Handler(*gateway.HTTPOptions) http.Handler
	SocketHTTP() net.Listener
	// ServeSocket serves the shims' connections on ln until ctx ends,
	// and returns once every connection it accepted has ended.
	ServeSocket(ctx context.Context, ln net.Listener) error
	// Reload applies a configuration that loaded; RefreshProjects
	// re-reads project files when the configuration did not change;
	// ProjectFiles lists the project files to watch.
	Reload(*registry.Config)
	RefreshProjects()
	ProjectFiles() []string
	// RecordReload and RecordNoConfig note a reload's outcome for the
	// status report and metrics.
	RecordReload(error)
	RecordNoConfig(error)
	// Activity counts the requests the hub has seen, to tell when the
	// daemon has gone quiet.
	Activity() uint64
	Close() error
}

var _ Hub = (*gateway.Hub)(nil)

// Notifier is told what the daemon is doing (sd_notify: READY, RELOADING,
// STOPPING). *deploy.Notifier implements it, nil included.
type Notifier interface {
	Ready()
	Reloading()
	Stopping()
}

// DaemonOptions configure a Daemon.
type DaemonOptions struct {
	// ConfigPath and LoadOptions are how the configuration is (re)loaded.
	ConfigPath  string
	LoadOptions *registry.LoadOptions
	// Config is the configuration the hub was built with; LoadErr says
	// why the file did not load at start (Config is then registry.Empty):
	// the daemon reports it and loads the file once it is fixed.
	Config  *registry.Config
	LoadErr error
	// HTTP and Socket are the listeners to serve (either may be nil).
	HTTP   net.Listener
	Socket net.Listener
	// HTTPOptions for the HTTP handler; Reload is set by the daemon.
	HTTPOptions gateway.HTTPOptions
	// ConnContext, when set, is the HTTP server's (see
	// gateway.Hub.ConnContext).
	ConnContext func(ctx context.Context, c net.Conn) context.Context
	// Reloads triggers a reload per value (SIGHUP).
	Reloads <-chan struct{}
	// Notifier is told of readiness, reloads and shutdown; nil = nobody.
	Notifier Notifier
	// Started, if set, runs once the cached listings are loaded, before
	// the daemon says it is ready.
	Started func()
	// Watch, when set, watches files and calls reload on changes (it is
	// registry.Watch in the daemon; tests may pass nil).
	Watch func(ctx context.Context, files func() []string, reload func(), resync <-chan struct{}) error
	// TrustFile is watched too, so that `mcpgw trust` applies at once.
	TrustFile string
	// LoadTimeout bounds reading the configuration at a reload; 0 means
	// 10 s.
	LoadTimeout time.Duration
	Logger      *slog.Logger
}

// Daemon is mcpgw's run loop around the hub: it serves the listeners,
// reloads the configuration (file changes, Reloads, POST /-/reload) one
// reload at a time, and shuts everything down when its context ends.
type Daemon struct {
	gw   Hub
	opts DaemonOptions
	log  *slog.Logger

	mu      sync.Mutex
	current *registry.Config
	// loaded says a configuration has loaded since the daemon started
	// (false while it serves none because its file never loaded).
	loaded bool
	// failed lists the files of a config that did not load, watched besides
	// the running config's: the file that broke may be new.
	failed []string
	resync chan struct{} // tells the watcher the file set may have changed
	// reloads numbers reloads as they start; applied is the latest one
	// that took effect (guarded by mu).
	reloads atomic.Uint64
	applied uint64
	// loadConfig reads the configuration (registry.Load of the options).
	loadConfig func() (*registry.Config, error)
	// closedConns counts the HTTP connections that have ended: memory
	// to hand back, for settleWhenIdle (Daemon.freed).
	closedConns atomic.Uint64
}

// NewDaemon returns the run loop of gw.
func NewDaemon(gw Hub, opts DaemonOptions) *Daemon {
	d := &Daemon{gw: gw, opts: opts, log: opts.Logger, current: opts.Config, loaded: opts.LoadErr == nil, resync: make(chan struct{}, 1)}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	d.loadConfig = func() (*registry.Config, error) { return registry.Load(opts.ConfigPath, d.loadOptions()) }
	if d.current == nil {
		d.current = registry.Empty(opts.ConfigPath)
	}
	if opts.LoadErr != nil {
		d.failed = registry.WatchFiles(opts.ConfigPath, opts.LoadOptions)
		gw.RecordNoConfig(opts.LoadErr)
	}
	return d
}

// loadOptions are the options of a reload: an imported file that does
// not load is skipped while no configuration has loaded yet (there is
// none to keep) or when the running one skipped it already (it was broken
// before: it must not hold back a fix of another file); one that broke
// since fails the reload, which keeps the running configuration.
func (d *Daemon) loadOptions() *registry.LoadOptions {
	var o registry.LoadOptions
	if d.opts.LoadOptions != nil {
		o = *d.opts.LoadOptions
	}
	d.mu.Lock()
	all, skipped := !d.loaded, d.current.Skipped
	d.mu.Unlock()
	outer := o.SkipBroken
	o.SkipBroken = func(path string) bool {
		return all || slices.ContainsFunc(skipped, func(s registry.SkippedFile) bool { return s.Path == path }) ||
			(outer != nil && outer(path))
	}
	return &o
}

// Run starts the hub and serves until ctx ends, then stops serving and
// closes the hub. It returns after every goroutine it started has exited
// (but for a configuration read that does not return, see Reload); the
// error is the first of a listener's.
func (d *Daemon) Run(ctx context.Context) error {
	o := d.opts.HTTPOptions
	o.Reload = func() error { return d.Reload("POST /-/reload") }
	// Stalled clients cannot hold the listener: headers and bodies must
	// arrive in time (a body is a JSON-RPC message, not an upload), idle
	// keep-alive connections are closed, and at most maxHTTPConns are open
	// at once; responses (SSE streams) have no deadline.
	srv := &http.Server{
		Handler:           d.gw.Handler(&o),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		// A connection idle between requests holds ~25 KB (its buffers
		// and goroutine); a loopback client reconnects for less.
		IdleTimeout: httpIdleTimeout,
		ConnContext: d.opts.ConnContext,
		ConnState: func(c net.Conn, st http.ConnState) {
			connState(c, st)
			if st == http.StateClosed {
				d.closedConns.Add(1) // what it held is handed back once quiet
			}
		},
	}
	d.gw.Start()
	if d.opts.Started != nil {
		d.opts.Started()
	}
	notify := d.opts.Notifier
	if notify != nil {
		notify.Ready()
	}
	g, ctx := errgroup.WithContext(ctx)
	if d.opts.HTTP != nil {
		g.Go(func() error {
			if err := srv.Serve(limitListener(d.opts.HTTP, maxHTTPConns)); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		})
	}
	if d.opts.Socket != nil {
		g.Go(func() error { return d.gw.ServeSocket(ctx, d.opts.Socket) })
		// The CLI's HTTP requests on the socket, as on the TCP listener.
		g.Go(func() error {
			if err := srv.Serve(d.gw.SocketHTTP()); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		})
	}
	g.Go(func() error {
		<-ctx.Done()
		if notify != nil {
			notify.Stopping()
		}
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			// A client still holding a stream (one that does not read
			// its events, say) is cut off: its session's writes end, and
			// closing the sessions cannot wait on them.
			_ = srv.Close()
		}
		return nil
	})
	if d.opts.Reloads != nil {
		g.Go(func() error {
			for {
				select {
				case <-ctx.Done():
					return nil
				case <-d.opts.Reloads:
					_ = d.Reload("SIGHUP")
				}
			}
		})
	}
	if d.opts.Watch != nil {
		g.Go(func() error {
			if err := d.opts.Watch(ctx, d.files, func() { _ = d.Reload("file change") }, d.resync); err != nil {
				d.log.Warn("not watching config files; reload with SIGHUP or `mcpgw reload`", "err", err)
			}
			return nil
		})
	}
	err := g.Wait()
	d.gw.Close()
	return err
}

// Reload loads the configuration again and applies it: a file that does
// not load keeps the running configuration (and says why); one with the
// same content is a no-op but for project files; otherwise only changed
// servers restart.
//
// The files are read before the lock is taken, and for at most
// loadTimeout: a read that never returns (a file on a hung network mount)
// fails this reload but not the ones after it. Of reloads that overlap, a
// read that started earlier never replaces what a later one applied.
func (d *Daemon) Reload(why string) error {
	if n := d.opts.Notifier; n != nil {
		n.Reloading()
		defer n.Ready()
	}
	seq := d.reloads.Add(1)
	next, err := d.load()
	d.mu.Lock()
	defer d.mu.Unlock()
	if seq < d.applied {
		return nil
	}
	d.applied = seq
	defer func() {
		select {
		case d.resync <- struct{}{}:
		default:
		}
	}()
	if err != nil {
		d.failed = registry.WatchFiles(d.opts.ConfigPath, d.opts.LoadOptions)
		if !d.loaded {
			d.gw.RecordNoConfig(err)
			d.log.Error("config reload failed; still serving no servers until the config loads", "trigger", why, "err", err)
			return err
		}
		d.gw.RecordReload(err)
		d.log.Error("config reload failed; still running the last good config", "trigger", why, "err", err)
		return err
	}
	d.loaded = true
	if d.failed != nil {
		// Said at the level of the failure's line, which an operator
		// reading the log at info would otherwise see as the last word.
		d.log.Info("config loads again; the last reload's failure is over", "trigger", why, "same_as_running", next.Hash == d.current.Hash)
		if next.Hash == d.current.Hash {
			d.gw.RecordReload(nil) // back to the running config
		}
	}
	d.failed = nil
	if next.Hash == d.current.Hash {
		d.log.Debug("config unchanged", "trigger", why)
		d.gw.RefreshProjects() // a project file or the trust list may have changed
		return nil
	}
	for _, w := range next.Warnings {
		d.log.Warn("config", "warning", w)
	}
	added, changed, removed := registry.Changes(d.current, next)
	d.gw.Reload(next)
	d.gw.RecordReload(nil)
	d.current = next
	d.log.Info("config reloaded", "trigger", why, "servers", len(next.Servers),
		"added", added, "changed", changed, "removed", removed)
	return nil
}

// loadTimeout bounds reading the configuration at a reload.
const loadTimeout = 10 * time.Second

// shutdownGrace is how long Run waits for open requests (event streams
// included) to end before it cuts their connections.
const shutdownGrace = 5 * time.Second

// requests counts the requests the daemon has served, freed the HTTP
// connections that ended (what they held can be handed back). Both only
// grow; a daemon whose requests have not changed for a while is quiet.
func (d *Daemon) requests() uint64 { return d.gw.Activity() }

func (d *Daemon) freed() uint64 { return d.closedConns.Load() }

// load reads the configuration, giving up after loadTimeout. The read
// itself cannot be interrupted; a stuck one ends with its file, and
// meanwhile holds nothing but its goroutine.
func (d *Daemon) load() (*registry.Config, error) {
	type loaded struct {
		cfg *registry.Config
		err error
	}
	ch := make(chan loaded, 1)
	go func() {
		cfg, err := d.loadConfig()
		ch <- loaded{cfg, err}
	}()
	t := time.NewTimer(d.loadTimeout())
	defer t.Stop()
	select {
	case l := <-ch:
		return l.cfg, l.err
	case <-t.C:
		return nil, fmt.Errorf("reading %s took over %s", d.opts.ConfigPath, d.loadTimeout())
	}
}

func (d *Daemon) loadTimeout() time.Duration {
	if d.opts.LoadTimeout > 0 {
		return d.opts.LoadTimeout
	}
	return loadTimeout
}

// files is the watch set: every file that contributed to the running
// configuration, the open sessions' project files, a broken file's, and
// the trust list.
func (d *Daemon) files() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	files := append(slices.Clone(d.current.Files), d.gw.ProjectFiles()...)
	files = append(files, d.failed...)
	if d.opts.TrustFile != "" {
		files = append(files, d.opts.TrustFile)
	}
	return files
}
