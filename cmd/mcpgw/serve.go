package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/mcpgw/mcpgw/cachefile"
	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/gateway"
	"github.com/mcpgw/mcpgw/gateway/audit"
	"github.com/mcpgw/mcpgw/gateway/runloop"
	"github.com/mcpgw/mcpgw/gateway/teamstore"
	"github.com/mcpgw/mcpgw/registry"
)

type serveFlags struct {
	mode        string // with --stdio
	listenSet   bool   // --listen was given
	config      string
	listen      string
	allowRemote bool
	cache       string
	logLevel    string
	logFormat   string
	logFile     string
	noBootstrap bool
	noFastPath  bool
	token       string // from --token-file or $MCPGW_TOKEN, never argv
	tokenFile   string
	socket      string
	stdio       bool
	cpuProfile  string
	memProfile  string
}

// memProfileRate is the runtime's default MemProfileRate, which
// --memprofile turns back on.
const memProfileRate = 512 * 1024

func serve(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	f, err := parseServeFlags(args, stderr)
	if err != nil {
		return err
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
	if f.memProfile != "" {
		pf, err := os.Create(f.memProfile)
		if err != nil {
			return err
		}
		runtime.MemProfileRate = memProfileRate // off until now (see main.go)
		defer func() { _ = pprof.Lookup("allocs").WriteTo(pf, 0); pf.Close() }()
	}
	logOut := stderr
	if f.logFile != "" {
		// A daemon the shim started: its log is a file of at most 10 MB,
		// with one older one beside it.
		lj := &lumberjack.Logger{Filename: f.logFile, MaxSize: 10, MaxBackups: 1}
		defer lj.Close()
		logOut = lj
	}
	log, err := deploy.NewLogger(logOut, f.logLevel, f.logFormat)
	if err != nil {
		return err
	}
	// Before any upstream starts: they run as our user, and must not read
	// our environment (the token) or memory through /proc.
	if err := deploy.ProtectProcess(); err != nil {
		log.Warn("the daemon's environment and memory stay readable to its upstreams", "err", err)
	}
	if f.listen != "" {
		if f.listen, err = deploy.ListenAddr(f.listen, f.allowRemote); err != nil {
			return err
		}
	}
	if f.token == "" && f.listen != "" && !f.stdio && !ownerCheck() {
		// No way to tell which user a loopback client runs as: the
		// install token stands in, and the CLI reads it from its file.
		if f.token, err = deploy.InstallToken(); err != nil {
			return fmt.Errorf("this system cannot tell which user connects to the HTTP listener, so it needs a token: %w", err)
		}
		log.Info("HTTP clients present the install token (this system cannot tell which user connects)", "file", deploy.TokenPath())
	}
	w, err := setUpGateway(f, log)
	if err != nil {
		return err
	}
	defer func() {
		w.gw.Close()
		if w.audit != nil {
			w.audit.Close()
		}
		if w.store != nil {
			w.store.Close()
		}
	}()
	if w.cfg.Team != nil && !f.stdio {
		log.Info("team mode: requests need a bearer token from the issuer", "issuer", w.cfg.Team.Issuer, "audience", w.cfg.Team.Audience)
	}
	if f.stdio {
		// A private single-session gateway: stdout carries protocol bytes only.
		w.gw.Start()
		log.Info("mcpgw serving one session on stdio", "version", version, "config", w.path, "servers", len(w.cfg.Servers))
		cwd, _ := os.Getwd()
		return w.gw.ServeTransport(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}}, gateway.SessionOptions{Mode: gateway.Mode(f.mode), Cwd: cwd})
	}
	return runloop.Serve(ctx, w.gw, runloop.ServeOptions{
		Listen: f.listen, ListenSet: f.listenSet, Socket: f.socket, Token: f.token,
		ConfigPath: w.path, LoadOptions: w.loadOpts, Config: w.cfg, LoadErr: w.loadErr,
		Gatherer: w.reg, CachePath: w.cachePath, Version: version, Logger: log,
	})
}

func parseServeFlags(args []string, stderr io.Writer) (*serveFlags, error) {
	fs := newFlagSet("serve", stderr)
	f := &serveFlags{}
	fs.StringVar(&f.config, "config", "", "config file (default "+registry.DefaultConfigPath()+")")
	fs.StringVar(&f.listen, "listen", defaultListen(), "HTTP listen address for /mcp, /metrics and /healthz (default $MCPGW_LISTEN or "+deploy.DefaultListen+"; \"\" for none)")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow a non-loopback --listen address (set a token too: --token-file or $MCPGW_TOKEN)")
	fs.StringVar(&f.cache, "cache", "", "metadata cache file (default settings.cachePath or "+cachefile.DefaultPath()+")")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log-format", "auto", "auto (coloured on a terminal, JSON otherwise), text or json")
	fs.StringVar(&f.logFile, "log-file", "", "write the log to `FILE`, at most 10 MB, with one older file kept (FILE.*); default stderr")
	fs.BoolVar(&f.noBootstrap, "no-bootstrap", false, "do not connect uncached servers at start")
	fs.BoolVar(&f.noFastPath, "no-fast-path", false, "answer tool calls through the MCP SDK too, as every other request (slower; for diagnosing)")
	// The token's value is never printed (not even as the flag's default
	// in -h): it is read from the environment after parsing.
	tokenState := "unset"
	if os.Getenv("MCPGW_TOKEN") != "" {
		tokenState = "set"
	}
	fs.StringVar(&f.tokenFile, "token-file", "", "read the bearer token HTTP clients must present (besides being you) from `FILE` (default $MCPGW_TOKEN, now "+tokenState+")")
	var tokenArg bool
	fs.Var(refusedFlag{&tokenArg}, "token", "not accepted: a token in the arguments is readable by every local user; use --token-file or $MCPGW_TOKEN")
	fs.StringVar(&f.socket, "socket", deploy.DefaultSocket(), "unix socket for `mcpgw stdio` shims (\"\" disables it)")
	fs.BoolVar(&f.stdio, "stdio", false, "serve one private session on stdin/stdout instead of listening")
	fs.StringVar(&f.mode, "mode", "", "with --stdio: the session's mode, proxy, toolsearch or direct (default: settings.mode)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile to `FILE` until the daemon stops (for benchmarks)")
	fs.StringVar(&f.memProfile, "memprofile", "", "write what the daemon allocated, and where, to `FILE` when it stops (for benchmarks)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if tokenArg {
		return nil, deploy.ErrTokenArg
	}
	f.token = os.Getenv("MCPGW_TOKEN")
	if f.tokenFile != "" {
		var err error
		if f.token, err = deploy.ReadToken(f.tokenFile); err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
	}
	fs.Visit(func(fl *flag.Flag) { f.listenSet = f.listenSet || fl.Name == "listen" })
	return f, nil
}

// wiring is what serve builds before it serves.
type wiring struct {
	path      string
	loadOpts  *registry.LoadOptions
	cfg       *registry.Config
	loadErr   error
	reg       *prometheus.Registry
	cachePath string
	gw        *gateway.Hub
	audit     *audit.Log
	store     *teamstore.Store // team.store; nil without
}

// setUpGateway loads the configuration (a daemon whose file does not load
// runs with none and says why) and builds the gateway.
func setUpGateway(f *serveFlags, log *slog.Logger) (*wiring, error) {
	w := &wiring{path: f.config}
	if w.path == "" {
		w.path = registry.DefaultConfigPath()
	}
	// Listen lets the registry skip servers that point back at us.
	w.loadOpts = &registry.LoadOptions{Listen: f.listen, TrustFile: registry.DefaultTrustPath()}
	// At start there is no configuration to keep: another program's file
	// that does not load is skipped (a warning names it), not a reason to
	// serve none of the others. Reloads skip it too until it is fixed.
	startOpts := *w.loadOpts
	startOpts.SkipBroken = func(string) bool { return true }
	w.cfg, w.loadErr = registry.Load(w.path, &startOpts)
	if w.loadErr != nil {
		if f.stdio {
			return nil, w.loadErr
		}
		// A daemon that exits here is restarted in a loop by systemd and
		// serves no one; it runs with no servers instead, says why (log,
		// status, metric) and picks up the file once it is fixed.
		log.Error("config does not load; serving no servers until it is fixed", "err", w.loadErr)
		w.cfg = registry.Empty(w.path)
	}
	// In team mode every request needs a user's token from the issuer,
	// wherever it comes from: that is the lock --allow-remote asks for.
	// (A reload that drops the team block leaves the owner check, which
	// refuses whoever it cannot tell.)
	if f.allowRemote && f.token == "" && !f.stdio && w.cfg.Team == nil {
		return nil, errors.New("--allow-remote needs a token (--token-file FILE or $MCPGW_TOKEN) or a team block in the config: without one, anyone who reaches the port can use your servers and their credentials")
	}
	if w.cfg.Missing {
		log.Info("no config file; starting with no servers", "path", w.path,
			"hint", `create it with {"mcpServers": {"name": {"command": "...", "args": []}}}`)
	}
	for _, warn := range w.cfg.Warnings {
		log.Warn("config", "warning", warn)
	}
	w.reg = prometheus.NewRegistry()
	w.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	w.cachePath = f.cache
	if w.cachePath == "" {
		w.cachePath = w.cfg.Settings.CachePath
	}
	if w.cachePath == "" {
		w.cachePath = cachefile.DefaultPath()
	}
	sessionDir := deploy.SessionDir() // shim sessions' state across restarts
	if f.stdio {
		sessionDir = "" // a private session has none
	}
	var stateKey []byte
	if sessionDir != "" {
		var err error
		if stateKey, err = audit.LoadKey(deploy.AuditKeyPath()); err != nil {
			log.Warn("shim sessions are not resumed across restarts", "err", err)
		}
	}
	cache := cachefile.Open(w.cachePath, &cachefile.Options{MaxAge: w.cfg.Settings.CacheMaxAge})
	aud, err := audit.Open(deploy.AuditPath(), deploy.AuditKeyPath(),
		&audit.Options{MaxBytes: w.cfg.Settings.AuditMaxBytes, Files: w.cfg.Settings.AuditFiles})
	if err != nil {
		log.Error("tool calls are not audited", "err", err)
	} else {
		w.audit = aud
	}
	if w.store, err = openTeamStore(w.cfg, f.stdio, log); err != nil {
		return nil, err
	}
	w.gw = gateway.New(w.cfg, &gateway.Options{
		Logger:      log,
		Registerer:  w.reg,
		Version:     version,
		Cache:       registry.NewListingCache(cache),
		NoBootstrap: f.noBootstrap,
		NoFastPath:  f.noFastPath,
		DirectTools: os.Getenv("MCP_DIRECT_TOOLS"),
		LoadOptions: w.loadOpts,
		Trust:       loadTrust(log),
		SessionDir:  sessionDir,
		StateKey:    stateKey,
		OAuthStore:  oauthStore(w.cfg.Settings),
		Audit:       w.audit,
		ResultsDir:  deploy.ResultsDir(),
		Pending:     w.pending(),
		Sessions:    w.sessions(),
		UserLogins:  w.userLogins(),
	})
	return w, nil
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

// defaultListen is $MCPGW_LISTEN, else deploy.DefaultListen.
func defaultListen() string {
	if l, ok := os.LookupEnv("MCPGW_LISTEN"); ok {
		return l
	}
	return deploy.DefaultListen
}

// ownerCheck says whether the daemon can tell which user a loopback HTTP
// client runs as (deploy.PeerUIDSupported); where it cannot, it requires
// the install token. MCPGW_TEST_NO_OWNER_CHECK=1 makes it act as where it
// cannot, so that tests on Linux cover that: it only adds the token (the
// owner check stays where it works).
func ownerCheck() bool {
	return deploy.PeerUIDSupported && os.Getenv("MCPGW_TEST_NO_OWNER_CHECK") != "1"
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
