package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"maps"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/gateway/audit"
	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/gateway/identity"
	"github.com/mcpgw/mcpgw/gateway/spill"
	"github.com/mcpgw/mcpgw/gateway/transport"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
	"github.com/mcpgw/mcpgw/upstream/oauth"
)

var pid = os.Getpid()

// Options configure a Hub. The zero value is usable.
type Options struct {
	Logger     *slog.Logger          // nil = discard
	Registerer prometheus.Registerer // nil = no metrics
	Version    string                // reported to clients and upstreams
	// Cache is the shared metadata cache (a *registry.ListingCache), which
	// the catalogue reads and writes; nil disables it.
	Cache registry.Cache
	// NoBootstrap disables connecting, at start, the servers that have no
	// valid cache entry.
	NoBootstrap bool
	// Trust returns the trusted project directories, read when a session
	// starts (so `mcpgw trust` needs no restart). nil disables project
	// overlays.
	Trust func() *registry.TrustStore
	// LoadOptions are the options the configuration was loaded with, for
	// project overlays.
	LoadOptions *registry.LoadOptions
	// SessionDir keeps the state of shim sessions (mode, activated tools,
	// grants) so that a session resumed after a daemon restart goes on
	// where it was; "" disables it.
	SessionDir string
	// StateKey authenticates the state files in SessionDir (an HMAC): the
	// per-install key (audit.LoadKey), so that only this install's daemons
	// restore them. nil: a random key, and states outlive no daemon.
	StateKey []byte
	// OAuthStore holds the logins of servers with "auth": "oauth" (mcpgw
	// login writes them); nil leaves those servers needing one.
	OAuthStore *oauth.Store
	// DirectTools selects tools every session lists under their own names
	// (MCP_DIRECT_TOOLS syntax: "*", "server", "server/tool", "__none__"),
	// in addition to servers' directTools settings.
	DirectTools string
	// NoFastPath sends every request through the SDK, tool calls included
	// (see gateway/transport): for comparing the two paths.
	NoFastPath bool
	// ResultsDir keeps the whole of results cut at maxOutputBytes, for the
	// mcp tool's read action and clients that read files; "" keeps none.
	ResultsDir string
	// Audit is where each tool call and approval decision is recorded
	// (settings.audit false turns it off); nil records nothing. The
	// caller closes it after the Hub.
	Audit *audit.Log
	// Pending keeps the calls waiting for approval from the page or the
	// CLI, and Sessions the HTTP sessions, where every replica finds
	// them: team.store (teamstore). nil keeps them in this process.
	Pending  dispatch.Pending
	Sessions SessionStore
	// UserLogins keeps each user's own OAuth logins, in team mode (servers
	// with "auth": "oauth" and "isolation": "user"): the team store's
	// (teamstore.Logins.For, sealed). nil keeps them in this process's
	// memory, lost when it stops.
	UserLogins func(user string) oauth.Backend
}

// Hub is the gateway daemon's core. Create it with New, call Start once,
// serve sessions through Handler or ServeTransport, and Close it.
//
// Its state is grouped by job, each group with its guard. Lock order:
// reconcileMu, then mu, then a session's own mu (session.mu); loginMu is
// taken before mu (startLogin counts its work); subMu, overrideMu and
// shims.mu are leaves, held while nothing else is taken.
type Hub struct {
	// Fixed at creation (New), read without a lock.
	log         *slog.Logger
	opts        Options
	version     string
	serverInfo  []byte // mcpgw's Implementation as JSON, for results written outside the SDK
	started     time.Time
	catalog     *registry.Catalog     // the listings: safe for concurrent use
	pool        *upstream.Pool        // the upstreams: safe for concurrent use
	team        *identity.Authority   // who is calling, in team mode; the users' tokens to exchange
	exchanger   *identity.Exchanger   // each user's tokens for servers with a tokenExchange block
	calls       *dispatch.Dispatcher  // the one dispatcher; it keeps the calls waiting for the page or the CLI
	transports  *transport.Transports // where requests enter
	results     *spill.Store          // nil: results are cut, not saved
	metrics     *metrics
	stateKey    []byte        // signs resumable shim state: Options.StateKey, or a random one
	discoverSem chan struct{} // bounds the first connections that run at once (discover)
	ctx         context.Context
	stop        context.CancelFunc
	// shared: the HTTP sessions kept in Options.Sessions; nil without.
	shared *sharedSessions

	// Each safe for concurrent use on its own (atomics, or a lock of its
	// own inside).
	base         atomic.Pointer[registry.Config] // the config as loaded; the catalogue's has the page's overrides applied
	latency      latencies                       // recent call durations per server, for status
	scripts      recentScripts                   // recent scripts, for the page
	running      runningScripts                  // scripts running, per session and in all (their limits)
	serverLogs   serverLogs                      // the daemon's recent lines about each server
	shims        shimClaims                      // shim sessions being served, by ID (sessionstate.go)
	activity     atomic.Uint64                   // requests seen (busy), for the run loop (Activity)
	fastCalls    atomic.Int64                    // calls answered on the fast path
	relayedCalls atomic.Int64                    // fast calls answered with the upstream's own bytes
	fastLists    atomic.Int64                    // tools/list answered on the fast path
	tables       sharedTables                    // tool tables sessions share (sharedtable.go)

	// convs are the open conversations of protocol 2026-07-28
	// (conversation.go); convs.mu is taken before reconcileMu and mu.
	convs conversations

	// reconcileMu makes reconciles one at a time (reconcile takes mu to
	// list the sessions).
	reconcileMu sync.Mutex

	// mu guards the sessions and discoveries, and the fields that follow.
	mu       sync.Mutex
	sessions map[*session]struct{}
	byHTTPID map[string]*session // sessions by Streamable HTTP session ID
	// discoveries are first connections in progress, by identity hash
	// (see discover).
	discoveries map[string]*discovery
	lastReload  *api.ReloadInfo
	http        httpListener   // what became of the HTTP listener (SetHTTP)
	closed      bool           // Close has begun: no session or discovery joins
	wg          sync.WaitGroup // registered sessions, discoveries and page logins: Add under mu while !closed (track)

	// subMu guards subs: the sessions subscribed to each upstream
	// resource, with the URI each knows it by (see subscribe.go).
	subMu sync.Mutex
	subs  map[subKey]map[*session]*subscriber

	// logLevelMu makes updateLogLevel one at a time (logging.go).
	logLevelMu sync.Mutex

	// overrideMu guards what the status page changed until the daemon
	// stops: servers disabled by name, and projects refused trust (not
	// listed there again).
	overrideMu  sync.Mutex
	disabled    map[string]bool
	refusedDirs map[string]bool

	// loginMu guards logins: status-page logins in progress, by server.
	loginMu sync.Mutex
	logins  map[string]*pageLogin

	// users: each user's own OAuth logins (userlogins.go); a leaf lock.
	users userLogins
}

// New returns a gateway for cfg. Nothing is connected until Start.
func New(cfg *registry.Config, opts *Options) *Hub {
	s := &Hub{
		sessions:    make(map[*session]struct{}),
		byHTTPID:    make(map[string]*session),
		discoveries: make(map[string]*discovery),
		subs:        make(map[subKey]map[*session]*subscriber),
		discoverSem: make(chan struct{}, discoveryConcurrency),
		started:     time.Now(),
	}
	if opts != nil {
		s.opts = *opts
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.log = slog.New(&teeHandler{Handler: s.log.Handler(), logs: &s.serverLogs})
	s.stateKey = s.opts.StateKey
	if len(s.stateKey) == 0 {
		s.stateKey = make([]byte, 32)
		_, _ = rand.Read(s.stateKey)
	}
	s.version = s.opts.Version
	if s.version == "" {
		s.version = "dev"
	}
	s.serverInfo, _ = json.Marshal(&mcp.Implementation{Name: "mcpgw", Version: s.version})
	s.ctx, s.stop = context.WithCancel(context.Background())
	s.metrics = newMetrics(s.opts.Registerer, cfg != nil && cfg.Team != nil)
	s.metrics.approvalServers(cfg)
	s.base.Store(cfg)
	s.catalog = registry.NewCatalog(cfg)
	if s.opts.Cache != nil {
		s.catalog.UseCache(s.opts.Cache)
	}
	s.team = s.teamAuthority()
	s.exchanger = identity.NewExchanger(&identity.ExchangerOptions{Endpoint: s.team.TokenEndpoint})
	s.pool = upstream.New(&upstream.Options{
		Logger:            s.log,
		Registerer:        s.opts.Registerer,
		ClientName:        "mcpgw",
		ClientVersion:     s.version,
		OnUpdate:          s.onUpdate,
		OnLog:             s.onLog,
		OnResourceUpdated: s.onResourceUpdated,
		Roots:             s.rootsFor,
		OAuthStore:        s.opts.OAuthStore,
		Exchange:          s.exchangeToken,
		ExchangeRefused:   s.exchangeRefused,
		UserLogins:        s.userLoginStore,
	})
	if s.opts.ResultsDir != "" {
		s.results = spill.New(s.opts.ResultsDir, 0, 0)
	}
	s.calls = dispatch.New(dispatch.Options{
		Logger: s.log, Resolve: s.findTool, Observer: s, Audit: s.opts.Audit, SaverFor: saverFor, Pending: s.opts.Pending,
	})
	s.transports = transport.New(s, transport.Options{
		Logger: s.log, Version: s.version, Protocols: sessionProtocols, NoFastPath: s.opts.NoFastPath,
		Team: s.team, Shared: s.sharedSessions(),
	})
	registerCatalog(s.opts.Registerer, s)
	return s
}

// Catalog returns the live catalogue.
func (s *Hub) Catalog() *registry.Catalog { return s.catalog }

// Pool returns the upstream pool.
func (s *Hub) Pool() *upstream.Pool { return s.pool }

// Start loads cached listings into the catalogue (no upstream is contacted
// for those), reconciles the pool (eager and keep-alive servers connect)
// and, unless disabled, connects once each enabled server that has no
// valid cache entry so that search and describe can answer next time
// without it.
func (s *Hub) Start() {
	v := s.catalog.View()
	s.pruneSessionStates()
	s.loadCache(v.Config)
	s.reconcile()
	s.discover(s.catalog.View())
}

// loadCache puts the cached listings of cfg's servers in the catalogue.
func (s *Hub) loadCache(cfg *registry.Config) {
	if v, found := s.catalog.LoadCached(cfg); len(found) > 0 {
		s.warnRejected(v, found)
	}
}

// warnRejected logs, once per listing stored, the tools the catalogue left
// out of the listings in set because clients could not be offered them.
func (s *Hub) warnRejected(v *registry.View, set map[string]*registry.Listing) {
	for _, sv := range v.Servers {
		l := sv.Listing
		if l == nil || len(l.Rejected) == 0 || set[sv.Server.Hash] == nil {
			continue
		}
		for _, r := range l.Rejected {
			s.log.Warn("tool skipped", "server", sv.Server.Name, "tool", r.Name, "source", l.Source, "err", r.Err)
		}
	}
}

// reconcile makes the pool match every configuration in use: the daemon's
// and the project overlays of open sessions. Upstreams no configuration
// names are closed (after their in-flight calls), and the catalogue
// forgets their listings.
func (s *Hub) reconcile() {
	s.reconcileMu.Lock()
	defer s.reconcileMu.Unlock()
	// Every name goes to the pool, the daemon's first: servers that share
	// an identity share one upstream, named after the first, and the other
	// names are its aliases.
	var servers []*registry.Server
	seen := map[*registry.Server]bool{}
	keep := map[string]bool{}
	add := func(cfg *registry.Config) {
		for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
			srv := cfg.Servers[name]
			keep[srv.Hash] = true
			// A hidden server is never started: nothing may reach it, and
			// nothing it says (logs, requests) may reach a session.
			if srv.Enabled && !srv.Untrusted && !seen[srv] && !cfg.Settings.Hidden(srv) {
				seen[srv] = true
				servers = append(servers, srv)
			}
		}
	}
	add(s.catalog.View().Config)
	for _, ss := range s.sessionList() {
		if ov := ss.overlay.Load(); ov != nil {
			add(ov)
		}
	}
	started := make(map[string]bool, len(servers))
	for _, srv := range servers {
		started[srv.Hash] = true
	}
	s.moveSubscriptions(started)
	s.pool.Reconcile(servers)
	s.catalog.Prune(keep)
}

// overlayFor returns the configuration a session of u (nil outside team
// mode) working in cwd sees, or nil when it is the daemon's: the project's
// servers and narrowing, then the policy by user and group (servers
// visible to others hidden, approvals added; registry.Config.ForUser). An
// error (a trusted project file that does not parse) leaves the caller's
// previous choice; the configuration returned with it is the daemon's as
// u sees it, for a caller that has none.
func (s *Hub) overlayFor(cwd string, u *identity.User) (*registry.Config, error) {
	base := s.catalog.View().Config
	ov := base
	if cwd != "" && s.opts.Trust != nil {
		proj, err := base.WithProject(cwd, s.opts.Trust(), s.opts.LoadOptions)
		if err != nil {
			s.log.Warn("project config not applied", "cwd", cwd, "err", err)
			return differing(base, forUser(base, u)), err
		}
		ov = s.withOverrides(proj)
	}
	return differing(base, forUser(ov, u)), nil
}

// forUser is cfg as u sees it; cfg itself outside team mode.
func forUser(cfg *registry.Config, u *identity.User) *registry.Config {
	if u == nil {
		return cfg
	}
	return cfg.ForUser(u.Name, u.Groups)
}

// differing returns ov, or nil when it shows the same servers as base,
// alike.
func differing(base, ov *registry.Config) *registry.Config {
	if ov == base {
		return nil
	}
	if len(ov.Servers) == len(base.Servers) {
		same := true
		for name, srv := range ov.Servers {
			if b, ok := base.Servers[name]; !ok || b.Hash != srv.Hash || b.Untrusted != srv.Untrusted || !b.SamePolicy(srv) {
				same = false
				break
			}
		}
		if same {
			return nil
		}
	}
	return ov
}

// onUpdate is the pool's OnUpdate: fresh lists from a live upstream go into
// the catalogue and the cache, and sessions hear about the change.
func (s *Hub) onUpdate(srv *registry.Server, snap *upstream.Snapshot) {
	l := liveListing(snap, time.Now())
	after, err := s.catalog.Publish(srv, l)
	if err != nil {
		s.log.Warn("writing metadata cache", "server", srv.Name, "err", err)
	}
	s.warnRejected(after, map[string]*registry.Listing{srv.Hash: l})
	s.toolsChanged()
}

func liveListing(snap *upstream.Snapshot, at time.Time) *registry.Listing {
	return &registry.Listing{
		Tools:        snap.Tools,
		Resources:    snap.Resources,
		Prompts:      snap.Prompts,
		Templates:    snap.Templates,
		Instructions: snap.Instructions,
		Source:       registry.SourceLive,
		At:           at,
	}
}

// toolsChanged brings every session's tool list in line with the
// catalogue; sessions whose list changed are told so.
func (s *Hub) toolsChanged() {
	for _, ss := range s.sessionList() {
		ss.syncTools(ss.View())
	}
}

func (s *Hub) sessionList() []*session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Keys(s.sessions))
}

// Reload applies a new configuration: the catalogue switches to it (cached
// listings are looked up for new servers), the pool restarts only servers
// whose identity changed, and sessions whose tools changed are notified.
func (s *Hub) Reload(cfg *registry.Config) {
	s.base.Store(cfg)
	s.metrics.approvalServers(cfg)
	s.catalog.SetConfig(s.withOverrides(cfg))
	s.loadCache(cfg)
	after := s.catalog.View()
	s.RefreshProjects()
	s.discover(after)
	s.toolsChanged()
}

// RefreshProjects re-reads the project overlays of open sessions (after a
// reload, or when a project file or the trust list changed), and what
// their users see in team mode, and reconciles
// the pool with every configuration in use. A project file that no longer
// parses keeps that session's previous overlay, as a broken main config
// keeps the last good one.
func (s *Hub) RefreshProjects() {
	changed := false
	for _, ss := range s.sessionList() {
		if ss.opts.Cwd == "" && ss.opts.User == nil {
			continue
		}
		ov, err := s.overlayFor(ss.opts.Cwd, ss.opts.User)
		if err != nil {
			continue
		}
		if old := ss.overlay.Load(); (old == nil) != (ov == nil) || (old != nil && old.Hash != ov.Hash) {
			ss.overlay.Store(ov)
			if ov != nil {
				s.loadCache(ov)
			}
			changed = true
		}
	}
	s.reconcile()
	if changed {
		s.toolsChanged()
	}
}

// ProjectFiles lists the project files open sessions' overlays depend on,
// for the config watcher.
func (s *Hub) ProjectFiles() []string {
	seen := map[string]bool{}
	var out []string
	for _, ss := range s.sessionList() {
		if ss.opts.Cwd == "" || s.opts.Trust == nil {
			continue
		}
		for _, f := range s.catalog.View().Config.ProjectFiles(ss.opts.Cwd) {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// closeWait bounds how long Close waits for the Hub's goroutines once
// every session has been told to end and every upstream is closed (their
// processes with them): a daemon asked to stop, by a service manager say,
// exits rather than hanging on one that does not end, and says what was
// still running.
var closeWait = 10 * time.Second

// Close ends every session, closes every upstream and waits, for at most
// closeWait, for all goroutines the Hub started. Safe to call twice.
func (s *Hub) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	sessions := slices.Collect(maps.Keys(s.sessions))
	s.mu.Unlock()
	s.stop()
	for _, ss := range sessions {
		ss.close()
	}
	err := s.pool.Close()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(closeWait):
		var stacks strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		s.log.Error("closing without the sessions and tasks that did not end in time", "after", closeWait,
			"sessions", len(s.sessionList()), "goroutines", runtime.NumGoroutine(), "stacks", stacks.String())
	}
	return err
}
