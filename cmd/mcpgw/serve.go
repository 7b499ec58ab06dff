package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lmittmann/tint"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/sync/errgroup"
	"golang.org/x/term"

	"github.com/mcpgw/mcpgw/cachefile"
	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/gateway"
	"github.com/mcpgw/mcpgw/registry"
)

// DefaultListen is the daemon's default HTTP address (documented in the README).
const DefaultListen = "127.0.0.1:7332"

type serveFlags struct {
	config      string
	listen      string
	allowRemote bool
	cache       string
	logLevel    string
	logFormat   string
	noBootstrap bool
	token       string
	socket      string
	stdio       bool
	cpuProfile  string
}

func serve(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f serveFlags
	fs.StringVar(&f.config, "config", "", "config file (default "+registry.DefaultConfigPath()+")")
	fs.StringVar(&f.listen, "listen", defaultListen(), "HTTP listen address for /mcp, /metrics and /healthz (default $MCPGW_LISTEN or "+DefaultListen+"; \"\" for none)")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow a non-loopback --listen address (set a --token too)")
	fs.StringVar(&f.cache, "cache", "", "metadata cache file (default settings.cachePath or "+cachefile.DefaultPath()+")")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log-format", "auto", "auto (coloured on a terminal, JSON otherwise), text or json")
	fs.BoolVar(&f.noBootstrap, "no-bootstrap", false, "do not connect uncached servers at start")
	// The token's value is never printed (not even as the flag's default
	// in -h): it is read from the environment after parsing.
	tokenState := "unset"
	if os.Getenv("MCPGW_TOKEN") != "" {
		tokenState = "set"
	}
	fs.StringVar(&f.token, "token", "", "bearer token HTTP clients must present (default $MCPGW_TOKEN, now "+tokenState+")")
	fs.StringVar(&f.socket, "socket", deploy.DefaultSocket(), "unix socket for `mcpgw stdio` shims (\"\" disables it)")
	fs.BoolVar(&f.stdio, "stdio", false, "serve one private session on stdin/stdout instead of listening")
	mode := fs.String("mode", "", "with --stdio: the session's mode, proxy, toolsearch or direct (default: settings.mode)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile to `FILE` until the daemon stops (for benchmarks)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f.token == "" {
		f.token = os.Getenv("MCPGW_TOKEN")
	}
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			pf.Close()
			return err
		}
		defer func() { pprof.StopCPUProfile(); pf.Close() }()
	}
	log, err := newLogger(stderr, f.logLevel, f.logFormat)
	if err != nil {
		return err
	}
	listenSet := false
	fs.Visit(func(fl *flag.Flag) { listenSet = listenSet || fl.Name == "listen" })
	if f.listen != "" {
		if err := checkListen(f.listen, f.allowRemote); err != nil {
			return err
		}
	}
	if f.allowRemote && f.token == "" && !f.stdio {
		return errors.New("--allow-remote needs a token (--token or $MCPGW_TOKEN): without one, anyone who reaches the port can use your servers and their credentials")
	}

	path := f.config
	if path == "" {
		path = registry.DefaultConfigPath()
	}
	// Listen lets the registry skip servers that point back at us.
	loadOpts := &registry.LoadOptions{Listen: f.listen, TrustFile: registry.DefaultTrustPath()}
	cfg, loadErr := registry.Load(path, loadOpts)
	if loadErr != nil {
		if f.stdio {
			return loadErr
		}
		// A daemon that exits here is restarted in a loop by systemd and
		// serves no one; it runs with no servers instead, says why (log,
		// status, metric) and picks up the file once it is fixed.
		log.Error("config does not load; serving no servers until it is fixed", "err", loadErr)
		cfg = registry.Empty(path)
	}
	if cfg.Missing {
		log.Info("no config file; starting with no servers", "path", path,
			"hint", `create it with {"mcpServers": {"name": {"command": "...", "args": []}}}`)
	}
	for _, w := range cfg.Warnings {
		log.Warn("config", "warning", w)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	cachePath := f.cache
	if cachePath == "" {
		cachePath = cfg.Settings.CachePath
	}
	if cachePath == "" {
		cachePath = cachefile.DefaultPath()
	}
	cache := cachefile.Open(cachePath, &cachefile.Options{MaxAge: cfg.Settings.CacheMaxAge})

	gw := gateway.New(cfg, &gateway.Options{
		Logger:      log,
		Registerer:  reg,
		Version:     version,
		Cache:       registry.NewListingCache(cache),
		NoBootstrap: f.noBootstrap,
		DirectTools: os.Getenv("MCP_DIRECT_TOOLS"),
		LoadOptions: loadOpts,
		Trust:       loadTrust(log),
		SessionDir:  sessionDir(f.stdio),
	})
	defer gw.Close()

	if f.stdio {
		// A private single-session gateway: stdout carries protocol bytes only.
		gw.Start()
		log.Info("mcpgw serving one session on stdio", "version", version, "config", path, "servers", len(cfg.Servers))
		return gw.ServeTransport(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}}, gateway.SessionOptions{Mode: *mode, Cwd: cwdOrEmpty()})
	}

	notify := deploy.NewNotifier(log)
	var sockLn net.Listener
	if f.socket != "" {
		ln, release, err := deploy.ListenSocket(f.socket)
		if err != nil {
			return err
		}
		// Released only once the gateway has closed, so that a daemon
		// started meanwhile cannot serve the socket while this one still
		// ends its sessions and upstreams.
		defer func() { gw.Close(); release() }()
		sockLn = ln
	}

	var ln net.Listener
	if f.listen != "" {
		ln, err = net.Listen("tcp", f.listen)
		switch {
		case err != nil && (listenSet || sockLn == nil):
			return fmt.Errorf("listening on %s: %w", f.listen, err)
		case err != nil:
			// The default port is taken (another program, or another user's
			// daemon): the socket still serves the shims.
			log.Warn("HTTP listener unavailable; serving the unix socket only", "listen", f.listen, "err", err)
			ln = nil
		}
	}
	rl := &reloader{path: path, opts: loadOpts, gw: gw, log: log, current: cfg, notify: notify, resync: make(chan struct{}, 1)}
	if loadErr != nil {
		rl.failed = registry.WatchFiles(path, loadOpts)
		gw.RecordReload(loadErr)
	}
	srv := &http.Server{
		Handler: gw.Handler(&gateway.HTTPOptions{
			Token: f.token, Gatherer: reg, SessionTimeout: cfg.Settings.SessionIdleTimeout, // read at start
			Reload: func() error { return rl.reload("POST /-/reload") },
		}),
		ReadHeaderTimeout: 10 * time.Second,
		ConnContext:       gw.ConnContext,
	}
	gw.Start()
	// Start-up parsed the config and the cache; hand that garbage back now
	// so an idle daemon stays small. Then trade some heap for fewer
	// collections on the hot path (set here, not through GOGC, which
	// upstream children would inherit).
	debug.FreeOSMemory()
	debug.SetGCPercent(gcPercent)
	mcpURL := "(none)"
	if ln != nil {
		mcpURL = "http://" + ln.Addr().String() + "/mcp"
	}
	log.Info("mcpgw serving", "version", version, "mcp", mcpURL,
		"socket", f.socket, "config", path, "servers", len(cfg.Servers), "cache", cachePath)
	notify.Ready()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, ctx := errgroup.WithContext(ctx)
	if ln != nil {
		g.Go(func() error {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		})
	}
	if sockLn != nil {
		g.Go(func() error { return gw.ServeSocket(ctx, sockLn) })
	}
	g.Go(func() error {
		<-ctx.Done()
		notify.Stopping()
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		_ = srv.Shutdown(sctx)
		return nil
	})
	g.Go(func() error {
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-hup:
				_ = rl.reload("SIGHUP")
			}
		}
	})
	g.Go(func() error {
		err := registry.Watch(ctx, rl.files, func() { _ = rl.reload("file change") }, &registry.WatchOptions{Logger: log, Resync: rl.resync})
		if err != nil {
			log.Warn("not watching config files; reload with SIGHUP or `mcpgw reload`", "err", err)
		}
		return nil
	})
	err = g.Wait()
	log.Info("mcpgw stopping")
	return err
}

// reloader applies config changes one at a time. A config that does not
// load keeps the running one; one with the same content hash is a no-op.
type reloader struct {
	mu      sync.Mutex
	path    string
	opts    *registry.LoadOptions
	gw      *gateway.Server
	log     *slog.Logger
	current *registry.Config
	notify  *deploy.Notifier // told RELOADING=1, then READY=1 when the reload is done
	// failed lists the files of a config that did not load, watched
	// besides the running config's: the file that broke may be new.
	failed []string
	resync chan struct{} // tells the watcher the file set may have changed
}

func (r *reloader) reload(why string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notify.Reloading()
	defer r.notify.Ready()
	defer func() {
		select {
		case r.resync <- struct{}{}:
		default:
		}
	}()
	next, err := registry.Load(r.path, r.opts)
	if err != nil {
		r.failed = registry.WatchFiles(r.path, r.opts)
		r.gw.RecordReload(err)
		r.log.Error("config reload failed; still running the last good config", "trigger", why, "err", err)
		return err
	}
	if r.failed != nil && next.Hash == r.current.Hash {
		// Back to the running config: the failure is over.
		r.gw.RecordReload(nil)
	}
	r.failed = nil
	if next.Hash == r.current.Hash {
		r.log.Debug("config unchanged", "trigger", why)
		// A project file or the trust list may have changed.
		r.gw.RefreshProjects()
		return nil
	}
	for _, w := range next.Warnings {
		r.log.Warn("config", "warning", w)
	}
	added, changed, removed := registry.Changes(r.current, next)
	r.gw.Reload(next)
	r.gw.RecordReload(nil)
	r.current = next
	r.log.Info("config reloaded", "trigger", why, "servers", len(next.Servers),
		"added", added, "changed", changed, "removed", removed)
	return nil
}

// files is the watch set: every file that contributed to the running
// config (Watch calls it again after each reload).
func (r *reloader) files() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	files := append(slices.Clone(r.current.Files), r.gw.ProjectFiles()...)
	files = append(files, r.failed...)
	return append(files, registry.DefaultTrustPath())
}

// loadTrust returns a reader of the trusted project directories, read
// afresh for each new session so `mcpgw trust` needs no restart.
func loadTrust(log *slog.Logger) func() *registry.TrustStore {
	return func() *registry.TrustStore {
		t, err := registry.LoadTrust(registry.DefaultTrustPath())
		if err != nil {
			log.Warn("reading trusted projects", "err", err)
		}
		return t
	}
}

func cwdOrEmpty() string {
	d, _ := os.Getwd()
	return d
}

// gcPercent is the daemon's GOGC: most of what a forwarded call allocates
// is short-lived message buffers, so collecting less often costs little
// memory and saves CPU per call.
const gcPercent = 400

// defaultListen is $MCPGW_LISTEN, else DefaultListen.
func defaultListen() string {
	if l, ok := os.LookupEnv("MCPGW_LISTEN"); ok {
		return l
	}
	return DefaultListen
}

// checkListen refuses non-loopback addresses unless allowed explicitly: the
// daemon starts processes on behalf of whoever can reach it.
func checkListen(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", addr, err)
	}
	if allowRemote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--listen %q is not a loopback address; anyone who reaches it can start processes as you. Use 127.0.0.1, or pass --allow-remote (with --token) if you mean it", addr)
	}
	return nil
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	switch strings.ToLower(format) {
	case "auto", "":
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			return slog.New(tint.NewTextHandler(w, &tint.Options{Level: lvl, TimeFormat: time.TimeOnly})), nil
		}
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lvl})), nil
	case "text", "logfmt":
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl})), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lvl})), nil
	}
	return nil, fmt.Errorf("--log-format %q: want auto, text or json", format)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
