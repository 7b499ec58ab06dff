// Package upstream owns mcpgw's connections to upstream MCP servers: one
// supervised connection per server identity (registry.Server.Hash), shared by
// every downstream session.
//
// Transports: a stdio command runs in its own process group with stderr
// captured (npx packages run straight from npm's cache); a URL is tried as
// Streamable HTTP, then legacy SSE. Lifecycles: lazy servers connect on
// first use and close after IdleTimeout; eager servers connect at Reconcile
// (and close when idle only if an IdleTimeout is set); keep-alive servers
// connect at Reconcile, are pinged every 30 s and reconnected when lost.
// Connects are single-flight and back off exponentially after failures.
// Closing ends a process's whole group; a killed mcpgw takes its upstreams
// with it (parent-death signal on Linux, and the reaper everywhere).
package upstream

import (
	"cmp"
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/oauth2"

	"github.com/mcpgw/mcpgw/internal/rawio"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/oauth"
)

// Options configures a Pool. A nil *Options means defaults.
type Options struct {
	Logger     *slog.Logger          // nil = discard; each upstream logs with "server" set
	Registerer prometheus.Registerer // nil = no metrics
	// ClientName and ClientVersion are the implementation sent to upstreams
	// (defaults "mcpgw", "dev").
	ClientName, ClientVersion string
	// OnUpdate is called after every successful connect and after an
	// upstream's tools/resources/prompts list_changed (re-listed), with the
	// fresh lists. It runs on a pool goroutine (never a caller's), without
	// pool locks held, for one upstream in order and one at a time; it may
	// be slow-ish (e.g. write the cache), which delays only that upstream's
	// later notifications. Close waits for running callbacks. Connect and
	// Reconnect return after OnUpdate has run for their snapshot, so it
	// must not call them itself.
	OnUpdate func(srv *registry.Server, snap *Snapshot)
	// OnState is called on every state change, under the same rules as
	// OnUpdate: the two form one ordered stream per upstream. A change
	// caused by Close is delivered before Close returns.
	OnState func(srv *registry.Server, st Status)
	// Getenv reads bearerTokenEnv variables at connect time; nil means
	// os.LookupEnv.
	Getenv func(string) (string, bool)
	// OnResourceUpdated receives the upstreams' notifications/resources/updated
	// (for subscribed URIs), on the upstream's reading goroutine. private
	// names the upstream that sent it: "" for the shared one (Upstream),
	// else the key of the private one (SessionUpstream), whose updates
	// concern only whoever that key stands for.
	OnResourceUpdated func(srv *registry.Server, private, uri string)
	// OnLog receives the upstreams' notifications/message, on the
	// upstream's reading goroutine: it must not block for long. private
	// names the upstream that sent it, as for OnResourceUpdated.
	//lint:ignore SA1019 MCP logging is deprecated in 2026-07-28 but still in use; a gateway forwards it
	OnLog func(srv *registry.Server, private string, p *mcp.LoggingMessageParams)
	// Roots answers an upstream's roots/list that is not for one peer (see
	// Peer): the roots of the sessions that use srv. Nil answers none.
	//lint:ignore SA1019 roots are deprecated in 2026-07-28 but still in use; a gateway forwards them
	Roots func(ctx context.Context, srv *registry.Server) []*mcp.Root
	// OAuthStore holds the logins of servers with "auth": "oauth"; nil
	// makes them needs-auth.
	OAuthStore *oauth.Store
	// Authorize, if set, runs an interactive OAuth login for srv after it
	// refused us (challenge is its 401 or 403) and returns once the new
	// credentials are stored; the request is then sent again. The daemon
	// leaves it nil: it never opens a browser; `mcpgw login` does.
	Authorize func(ctx context.Context, srv *registry.Server, challenge *http.Response) error
	// Exchange gives the bearer token that the upstream private to key
	// (SessionUpstream) sends to srv, a server with a tokenExchange
	// block; "" for the shared upstream. It is called before every
	// request to srv, with the request's context, so it should keep the
	// tokens it gives. Its error fails the request (a connect fails and
	// backs off), and says why. Nil: such servers cannot connect.
	Exchange func(ctx context.Context, srv *registry.Server, key string) (string, error)
	// ExchangeRefused is told that srv's upstream private to key answered
	// 401 to a token Exchange gave it: that token is not to be given
	// again (the next request exchanges anew). It may be nil.
	ExchangeRefused func(srv *registry.Server, key string)
	// UserLogins, if set, gives the store of the OAuth logins of whoever
	// the upstream private to key stands for ("" for the shared one),
	// for srv, a server with "auth": "oauth"; nil leaves srv to
	// OAuthStore. An upstream given a store is reached with its login
	// only: never with OAuthStore's, never through Authorize, and one
	// without a login is refused with the login to run (team mode: each
	// user's own login, "isolation": "user"). It is called at each
	// connect; the pool keeps one Source per key and URL, so that a
	// user's refreshes are one at a time and never another user's.
	UserLogins func(srv *registry.Server, key string) *oauth.Store
}

// A Pool holds one supervised Upstream per server identity. Its methods are
// safe for concurrent use.
type Pool struct {
	opts    Options
	log     *slog.Logger
	metrics *metrics
	dial    dialFunc

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc

	httpBase *http.Transport
	reaper   reaper

	oauthMu      sync.Mutex
	oauthSources map[string]*oauth.Source // by server URL: one refresh at a time
	userSources  map[userSourceKey]*oauth.Source

	mu sync.Mutex
	//lint:ignore SA1019 MCP logging is deprecated in 2026-07-28 but still in use; a gateway forwards it
	logLevel  mcp.LoggingLevel     // sent to upstreams that log; "" = never set
	upstreams map[string]*Upstream // by Hash
	private   map[privateKey]*Upstream
	sessions  map[*session]bool // live sessions, force-closed by Close
	procs     map[*process]bool // running processes
	closed    bool
	closeDone chan struct{}
	wg        sync.WaitGroup // every goroutine the pool starts

	// spawner (see spawn_*.go)
	spawnOnce sync.Once
	spawnReqs chan spawnRequest
	spawnStop chan struct{}
	spawnDone chan struct{}
}

// spawnRequest asks the spawner goroutine (Linux) to start a command.
type spawnRequest struct {
	cmd   *exec.Cmd
	reply chan error
}

func (p *Pool) getenv(name string) (string, bool) {
	if p.opts.Getenv != nil {
		return p.opts.Getenv(name)
	}
	return os.LookupEnv(name)
}

// New returns an empty pool.
func New(opts *Options) *Pool {
	p := &Pool{
		upstreams: map[string]*Upstream{},
		private:   map[privateKey]*Upstream{},
		sessions:  map[*session]bool{},
		procs:     map[*process]bool{},
		closeDone: make(chan struct{}),
		spawnStop: make(chan struct{}),
	}
	if opts != nil {
		p.opts = *opts
	}
	if p.opts.ClientName == "" {
		p.opts.ClientName = "mcpgw"
	}
	if p.opts.ClientVersion == "" {
		p.opts.ClientVersion = "dev"
	}
	p.log = p.opts.Logger
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.reaper.log = p.log
	p.metrics = newMetrics(p.opts.Registerer)
	p.dial = p.dialDefault
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.httpBase = http.DefaultTransport.(*http.Transport).Clone()
	dial := p.httpBase.DialContext
	p.httpBase.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return rawio.Conn(c), nil
	}
	return p
}

// Upstream returns the supervised upstream for srv's identity (srv.Hash),
// creating it, unconnected, if needed. The same Hash gives the same
// *Upstream, even under different names. An upstream keeps the name it was
// created (or last reconciled) with, so that its logs, status and metric
// series stay put; another name with the same identity becomes an alias
// (Status.Aliases), and only a srv under the upstream's own name updates
// its behaviour fields (timeouts, lifecycle, idle timeout). Reconcile
// settles names and aliases for the whole configuration.
// After Close, the returned Upstream is closed. It panics if srv or
// srv.Hash is empty.
func (p *Pool) Upstream(srv *registry.Server) *Upstream {
	if srv == nil || srv.Hash == "" {
		panic("upstream: Pool.Upstream needs a server with a Hash")
	}
	p.mu.Lock()
	u := p.upstreams[srv.Hash]
	if u == nil {
		u = newUpstream(p, srv, "")
		if p.closed {
			u.retired = true
			u.state = StateClosed
			u.m.forget(srv.Name)
		} else {
			p.upstreams[srv.Hash] = u
		}
		p.mu.Unlock()
		return u
	}
	p.mu.Unlock()
	u.use(srv)
	return u
}

// SessionUpstream returns the upstream of srv private to one session (key),
// creating it if needed: for servers with "isolation": "session", whose
// requests to the client (sampling, elicitation, roots) must never be
// ambiguous, or which keep per-client state. It lives until EndSession(key)
// or until srv's identity leaves the configuration (Reconcile), and closes
// when idle like any other.
func (p *Pool) SessionUpstream(srv *registry.Server, key string) *Upstream {
	if srv == nil || srv.Hash == "" || key == "" {
		panic("upstream: Pool.SessionUpstream needs a server with a Hash and a session key")
	}
	k := privateKey{srv.Hash, key}
	p.mu.Lock()
	u := p.private[k]
	if u == nil {
		u = newUpstream(p, srv, key)
		if p.closed {
			u.retired = true
			u.state = StateClosed
		} else {
			p.private[k] = u
		}
		p.mu.Unlock()
		return u
	}
	p.mu.Unlock()
	u.use(srv)
	return u
}

// EndSession closes the upstreams private to session key, once their calls
// have finished.
func (p *Pool) EndSession(key string) {
	p.mu.Lock()
	var gone []*Upstream
	for k, u := range p.private {
		if k.session == key {
			delete(p.private, k)
			gone = append(gone, u)
		}
	}
	p.mu.Unlock()
	for _, u := range gone {
		u.retire()
	}
}

// Private returns the upstream of srv private to key if there is one,
// without making it (see SessionUpstream); nil otherwise.
func (p *Pool) Private(srv *registry.Server, key string) *Upstream {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.private[privateKey{srv.Hash, key}]
}

// PrivateStatus returns the status of each upstream of srv's identity
// private to a key (a session's, or a user's), by key.
func (p *Pool) PrivateStatus(srv *registry.Server) map[string]Status {
	p.mu.Lock()
	var ups []*Upstream
	var keys []string
	for k, u := range p.private {
		if k.hash == srv.Hash {
			ups, keys = append(ups, u), append(keys, k.session)
		}
	}
	p.mu.Unlock()
	out := make(map[string]Status, len(ups))
	for i, u := range ups {
		out[keys[i]] = u.Status()
	}
	return out
}

// privateKey identifies an upstream private to a session.
type privateKey struct{ hash, session string }

// Reconcile makes the pool match the configuration: upstreams whose Hash is
// not among servers are closed once their in-flight calls finish (this
// includes upstreams created by Upstream for servers not in the list); eager
// and keep-alive servers are connected in the background. Unchanged
// upstreams are untouched: same connection, same process.
//
// servers may name one identity several times (the same server under two
// names, e.g. a user entry and a project alias): the upstream keeps its
// current name while that name is among them, else takes the first of them,
// and the others are its aliases.
func (p *Pool) Reconcile(servers []*registry.Server) {
	groups := map[string][]*registry.Server{}
	var order []string
	for _, srv := range servers {
		if groups[srv.Hash] == nil {
			order = append(order, srv.Hash)
		}
		groups[srv.Hash] = append(groups[srv.Hash], srv)
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	var gone []*Upstream
	for h, u := range p.upstreams {
		if groups[h] == nil {
			delete(p.upstreams, h)
			gone = append(gone, u)
		}
	}
	for k, u := range p.private {
		if groups[k.hash] == nil {
			delete(p.private, k)
			gone = append(gone, u)
		}
	}
	p.mu.Unlock()
	for _, u := range gone {
		u.retire()
	}
	for _, h := range order {
		group := groups[h]
		u := p.Upstream(group[0])
		srv := u.settleNames(group)
		if srv.Untrusted {
			continue
		}
		switch srv.Lifecycle {
		case registry.LifecycleEager:
			u.connectInBackground()
		case registry.LifecycleKeepAlive:
			u.superviseKeepAlive()
		}
	}
}

// Status returns one Status per upstream, sorted by name.
func (p *Pool) Status() []Status {
	p.mu.Lock()
	ups := make([]*Upstream, 0, len(p.upstreams))
	for _, u := range p.upstreams {
		ups = append(ups, u)
	}
	p.mu.Unlock()
	out := make([]Status, 0, len(ups))
	for _, u := range ups {
		out = append(out, u.Status())
	}
	slices.SortFunc(out, func(a, b Status) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Hash, b.Hash))
	})
	return out
}

// Close closes every upstream (in-flight calls fail with ErrClosed),
// ends every process and waits for every goroutine the pool started.
// It is safe to call more than once; later calls wait for the first.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.closeDone
		return nil
	}
	p.closed = true
	ups := make([]*Upstream, 0, len(p.upstreams)+len(p.private))
	for _, u := range p.upstreams {
		ups = append(ups, u)
	}
	for _, u := range p.private {
		ups = append(ups, u)
	}
	clear(p.upstreams)
	clear(p.private)
	p.mu.Unlock()

	p.cancel() // aborts connects and supervisors
	for _, u := range ups {
		u.markClosed()
	}
	// Sessions are snapshotted only now: a connect that finishes after
	// markClosed sees its upstream closed and closes its own session.
	p.mu.Lock()
	sessions := make([]*session, 0, len(p.sessions))
	for s := range p.sessions {
		sessions = append(sessions, s)
	}
	p.mu.Unlock()
	for _, s := range sessions {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			s.close(true)
		}()
	}
	p.wg.Wait()

	// Anything still running was started by a connect that raced Close.
	p.mu.Lock()
	procs := make([]*process, 0, len(p.procs))
	for pr := range p.procs {
		procs = append(procs, pr)
	}
	p.mu.Unlock()
	for _, pr := range procs {
		_ = pr.Close()
	}
	p.stopSpawner()
	p.reaper.close()
	p.httpBase.CloseIdleConnections()
	close(p.closeDone)
	return nil
}

// goTracked runs f on a new goroutine the pool waits for in Close. It
// reports false, without running f, once the pool is closing.
func (p *Pool) goTracked(f func()) bool {
	if !p.enter() {
		return false
	}
	go func() {
		defer p.wg.Done()
		f()
	}()
	return true
}

// enter registers work Close must wait for; false once the pool is closing.
// Pair with p.wg.Done.
func (p *Pool) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.wg.Add(1)
	return true
}

// addSession records a live session; false (not recorded) once closing.
func (p *Pool) addSession(s *session) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.sessions[s] = true
	return true
}

func (p *Pool) removeSession(s *session) {
	p.mu.Lock()
	delete(p.sessions, s)
	p.mu.Unlock()
}

func (p *Pool) processStarted(pr *process) {
	p.mu.Lock()
	p.procs[pr] = true
	p.mu.Unlock()
	p.reaper.add(pr.pid)
	p.metrics.processStarted()
}

func (p *Pool) processExited(pr *process) {
	p.mu.Lock()
	delete(p.procs, pr)
	p.mu.Unlock()
	p.reaper.remove(pr.pid)
	p.metrics.processExited()
}

// newClient returns the MCP client for one connect of u. List-changed
// notifications make u re-list and publish a new Snapshot.
func (p *Pool) newClient(u *Upstream) *mcp.Client {
	opts := &mcp.ClientOptions{
		Logger: u.logger(),
		// Calls answer input requests themselves (roundTrips), through
		// the caller's peer.
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ToolListChangedHandler: func(_ context.Context, req *mcp.ToolListChangedRequest) {
			u.requestRelist(req.Session)
		},
		ResourceListChangedHandler: func(_ context.Context, req *mcp.ResourceListChangedRequest) {
			u.requestRelist(req.Session)
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			if p.opts.OnResourceUpdated != nil && req.Params != nil {
				u.mu.Lock()
				srv := u.srv
				u.mu.Unlock()
				p.opts.OnResourceUpdated(srv, u.session, req.Params.URI)
			}
		},
		PromptListChangedHandler: func(_ context.Context, req *mcp.PromptListChangedRequest) {
			u.requestRelist(req.Session)
		},
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			u.progress.deliver(ctx, req.Params)
		},
		//lint:ignore SA1019 MCP logging is deprecated in 2026-07-28 but still in use; a gateway forwards it
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			if p.opts.OnLog != nil && req.Params != nil {
				u.mu.Lock()
				srv := u.srv
				u.mu.Unlock()
				p.opts.OnLog(srv, u.session, req.Params)
			}
		},
	}
	p.clientHandlers(u, opts)
	c := mcp.NewClient(&mcp.Implementation{Name: p.opts.ClientName, Version: p.opts.ClientVersion}, opts)
	c.AddReceivingMiddleware(p.rootsMiddleware(u), u.acks.middleware)
	return c
}

// oauthSource returns the token source of an OAuth server, shared by every
// connection to its URL, so that refreshes are serialized.
func (p *Pool) oauthSource(srv *registry.Server) *oauth.Source {
	store := p.opts.OAuthStore
	if store == nil {
		store = &oauth.Store{} // no directory: never logged in
	}
	p.oauthMu.Lock()
	defer p.oauthMu.Unlock()
	if p.oauthSources == nil {
		p.oauthSources = map[string]*oauth.Source{}
	}
	src := p.oauthSources[srv.URL]
	if src == nil {
		ctx := context.WithValue(p.ctx, oauth2.HTTPClient, oauth.HTTPClient(srv.OAuth != nil && srv.OAuth.AllowPrivateNetwork))
		src = store.Source(ctx, srv.URL)
		p.oauthSources[srv.URL] = src
	}
	return src
}

// userSourceKey names a Source of Options.UserLogins: a private
// upstream's key and the server's URL.
type userSourceKey struct{ key, url string }

// userSource returns the token source of store, the logins of whoever
// key stands for, for srv; the same Source for every connection of that
// key to srv's URL while store is the same.
func (p *Pool) userSource(store *oauth.Store, srv *registry.Server, key string) *oauth.Source {
	p.oauthMu.Lock()
	defer p.oauthMu.Unlock()
	if p.userSources == nil {
		p.userSources = map[userSourceKey]*oauth.Source{}
	}
	k := userSourceKey{key, srv.URL}
	src := p.userSources[k]
	if src == nil || !src.From(store) {
		ctx := context.WithValue(p.ctx, oauth2.HTTPClient, oauth.HTTPClient(srv.OAuth != nil && srv.OAuth.AllowPrivateNetwork))
		src = store.Source(ctx, srv.URL)
		p.userSources[k] = src
	}
	return src
}

// LoginChanged tells the pool that the login of whoever key stands for
// (Options.UserLogins) to srv changed, or is gone: their upstream's next
// request reads it again.
func (p *Pool) LoginChanged(srv *registry.Server, key string) {
	p.oauthMu.Lock()
	src := p.userSources[userSourceKey{key, srv.URL}]
	p.oauthMu.Unlock()
	if src != nil {
		src.Reset()
	}
}
