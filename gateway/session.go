package gateway

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/content"
	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/gateway/transport"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// session is one downstream MCP session: its own go-sdk Server (tools are
// per Server in the SDK, and what a session sees differs from another's:
// mode, activated tools, direct tools).
type session struct {
	// Fixed before the session starts, read without a lock.
	gw   *Hub
	key  string         // names its private upstreams (Pool.SessionUpstream)
	opts SessionOptions // Secret cleared: see secret
	// secret resumes a shim's session (claimShim); "" for a session
	// that is not kept.
	secret string
	// sessionless: the session serves an HTTP conversation of protocol
	// 2026-07-28 (conversation.go), shared by every request that
	// describes itself alike, so it keeps nothing for one client: no
	// activations (toolsearch is served as proxy), grants or saved results.
	sessionless bool
	mode        mode
	direct      directSpec
	directSrc   string // the direct tools as the session or the daemon gave them
	server      *mcp.Server
	// ctx ends when the session or the daemon ends; every request's context
	// ends with it, so a closing session does not wait for slow calls.
	ctx    context.Context
	cancel context.CancelFunc
	// hangup, if set, closes the session's connection under the SDK: for
	// the shim's socket, where a write blocks while the client does not
	// read (a piped session has a write deadline when it drains).
	hangup func()
	// saver saves the session's results too big to show (nil: the daemon
	// keeps none).
	saver content.Saver

	// httpID is its Streamable HTTP session ID, once registered: guarded
	// by the Hub's mu, which registers it.
	httpID string

	// Each safe for concurrent use on its own.
	out        outbox                          // what is fanned out to it (delivery.go)
	results    ownedResults                    // the saved results it was given, all its mcp({read}) reads
	overlay    atomic.Pointer[registry.Config] // the session's project configuration (nil: the daemon's)
	lastActive atomic.Int64                    // when the client last sent a request (Unix ns)
	inFlight   atomic.Int64                    // the go-sdk's requests being handled (cancelMiddleware)
	tools      atomic.Pointer[toolTable]       // what it lists, and the handlers of its own tools: replaced under mu (syncTools)

	// The session's parts, by job, each with its guard. Lock order: the
	// Hub's mu, then the session's mu, then the leaves (conn.mu,
	// relist.mu, fast.mu, roots.mu), which take nothing after them.
	conn   clientConn  // the client's connection, as the SDK negotiated it
	relist relistState // how the client has re-listed its tools (holdForRelist)
	fast   fastCalls   // its calls in flight on the fast path
	roots  clientRoots // the client's roots, for upstreams that ask
	// handshake orders the client's initialize and server/discover
	// (eraMiddleware); held across either's handler, it takes nothing
	// the handlers take before it.
	handshake sync.Mutex

	// mu guards what the session owns as a conversation (the fields that
	// follow, kept across daemon restarts for a shim's session,
	// sessionstate.go) and what it registered on server (listing). Its
	// tool table (tools) is replaced under it.
	mu         sync.Mutex
	activated  map[string]bool // toolsearch: gateway names activated by ToolSearch
	grants     map[string]bool // approvals for the session: "tool:server/tool", "server:server"
	servers    map[string]bool // the servers the session has called (for the status page)
	instructed map[string]bool // toolsearch: servers whose instructions an answer gave
	listing    registrations
}

// clientConn is the client's side of a session: its go-sdk session and
// what it negotiated and declared. mu is a leaf.
type clientConn struct {
	mu        sync.Mutex
	ss        *mcp.ServerSession
	joined    bool        // register has made it one of the daemon's sessions
	initTimer *time.Timer // an HTTP session's expireUninitialized, until it is initialized
	protocol  string      // the protocol version ss negotiated
	sdkSeen   time.Time   // HTTP: when the SDK last handled a request of the session (see serveFast)
	ui        bool        // the client declared MCP Apps (registry.UIExtension)
	//lint:ignore SA1019 MCP logging is deprecated in 2026-07-28 but still in use; a gateway forwards it
	logLevel mcp.LoggingLevel // set by the client's logging/setLevel
}

// attach makes sess the client's go-sdk session, if it has none yet, once
// a request of protocol 2026-07-28 or later has initialized it: such a
// request needs no initialize, and the go-sdk takes the client's
// capabilities from the first one. A shim's session is registered only
// once the go-sdk is already reading (Hub.ServeSession), and the client's
// first requests can be handled before: attached by then, a call can ask
// its client for an approval.
func (c *clientConn) attach(sess *mcp.ServerSession) {
	p := sess.InitializeParams()
	if p == nil || p.ProtocolVersion < transport.FirstSessionless {
		return
	}
	c.mu.Lock()
	if c.ss == nil {
		c.ss, c.protocol = sess, p.ProtocolVersion
	}
	c.mu.Unlock()
}

// session is the client's go-sdk session; nil until it has initialized.
func (c *clientConn) session() *mcp.ServerSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ss
}

// declaredUI reports whether the client declared MCP Apps.
func (c *clientConn) declaredUI() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ui
}

// registrations are what a session registered on its go-sdk Server
// besides its tool table (tools.go): prompts, resources and templates,
// which the SDK lists and serves, and the header-bound tools whose
// Mcp-Param-* headers it checks. Guarded by session.mu.
type registrations struct {
	prompts     map[string]*registry.Prompt
	resources   map[string]*registry.Resource
	templates   map[string]*registry.Template
	headerBound map[string]*registry.Tool
}

// relistState counts the tools/list requests a session answered, for
// holdForRelist. mu is a leaf.
type relistState struct {
	mu       sync.Mutex
	lists    int           // tools/list requests answered
	listed   chan struct{} // closed (and replaced) when one is answered
	noRelist bool          // the client did not re-list after list_changed: do not hold
}

// answered notes a tools/list answered.
func (r *relistState) answered() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lists++
	close(r.listed)
	r.listed = make(chan struct{})
}

// clientRoots are the client's roots, as last listed. mu is a leaf.
type clientRoots struct {
	mu sync.Mutex
	//lint:ignore SA1019 roots are deprecated in 2026-07-28 but still in use; a gateway forwards them
	roots []*mcp.Root
	stale bool // the client said they changed
}

// newSession makes the session of opts, with st (nil: none) restored;
// a shim's session is claimed first (claimShim). A sessionless one serves
// a conversation (see conversation.go).
func (s *Hub) newSession(opts SessionOptions, st *sessionState, sessionless bool) *session {
	ov, _ := s.overlayFor(opts.Cwd, opts.User) // a broken project file: the daemon's config as the user sees it, and a warning logged
	if ov != nil {
		s.loadCache(ov)
	}
	v := s.catalog.ViewFor(ov)
	ss := &session{
		gw:        s,
		key:       "s" + strconv.FormatInt(sessionKeys.Add(1), 10),
		opts:      opts,
		mode:      modeOf(opts.Mode, v.Config.Settings.Mode, sessionless),
		activated: make(map[string]bool),
		listing: registrations{
			prompts:   make(map[string]*registry.Prompt),
			resources: make(map[string]*registry.Resource),
			templates: make(map[string]*registry.Template),
		},
		relist:      relistState{listed: make(chan struct{})},
		sessionless: sessionless,
	}
	if s.results != nil && !sessionless {
		ss.saver = ss.saveResult
	}
	ss.secret, ss.opts.Secret = opts.Secret, ""
	if st != nil {
		ss.mode = modeOf(registry.Mode(st.Mode), ss.mode.Name(), sessionless)
		for _, name := range st.Activated {
			ss.activated[name] = true
		}
		for _, g := range st.Grants {
			if ss.grants == nil {
				ss.grants = make(map[string]bool)
			}
			ss.grants[g] = true
		}
	}
	spec := s.opts.DirectTools
	if opts.DirectTools != "" {
		spec = opts.DirectTools
	}
	ss.direct, ss.directSrc = parseDirectSpec(spec), spec
	ss.overlay.Store(ov)

	instructions := surface.SessionInstructions(v, ss.mode.Name())
	ss.server = mcp.NewServer(&mcp.Implementation{Name: "mcpgw", Version: s.version}, &mcp.ServerOptions{
		Instructions: instructions,
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			s.register(ss, req.Session)
		},
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			//lint:ignore SA1019 MCP logging is deprecated in 2026-07-28 but still in use; a gateway forwards it
			Logging: &mcp.LoggingCapabilities{},
		},
		CompletionHandler: func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return ss.complete(ctx, req)
		},
		//lint:ignore SA1019 roots are deprecated in 2026-07-28 but still in use; a gateway forwards them
		RootsListChangedHandler:   func(context.Context, *mcp.RootsListChangedRequest) { ss.rootsChanged() },
		SubscribeHandler:          func(ctx context.Context, req *mcp.SubscribeRequest) error { return ss.subscribe(ctx, req) },
		UnsubscribeHandler:        func(ctx context.Context, req *mcp.UnsubscribeRequest) error { return ss.unsubscribe(ctx, req) },
		SupportedProtocolVersions: sessionProtocols,
		GetSessionID:              opts.SessionID(), // a session resumed from team.store keeps its ID
		// Protocol 2026-07-28's cache hints on listings, discover and
		// reads: what mcpgw lists is the user's own (their config, their
		// project, their mode), and changes are announced (list_changed),
		// so no shared cache may keep it and no client should trust it
		// for long.
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.TTLMs, c.CacheScope = 0, "private"
		},
	})
	ss.ctx, ss.cancel = context.WithCancel(s.ctx)
	context.AfterFunc(ss.ctx, ss.fast.cancelAll)
	// Middleware runs in this order; toolsMiddleware answers tools/list
	// and tools/call from the session's table (tools.go).
	ss.server.AddReceivingMiddleware(ss.boundErrors, ss.eraMiddleware, ss.cancelMiddleware, ss.appsMiddleware, ss.logMiddleware, ss.resourceListMiddleware, ss.toolsMiddleware)
	ss.syncTools(v)
	if ov != nil {
		s.discover(v) // the project's own servers
	}
	return ss
}

// sessionProtocols are the protocol versions sessions accept: every one
// the go-sdk speaks. Which a transport can carry is the go-sdk's to say:
// a Streamable HTTP session negotiates up to 2025-11-25, and requests of
// 2026-07-28 reach a conversation (conversation.go); on the shim's
// connection, which is one client's, a 2026-07-28 client's requests are
// its session's.
var sessionProtocols = mcp.SupportedProtocolVersions()

// naming is how the session's client names mcpgw's tools (see surface.NamingFor);
// known once the client has initialized.
func (ss *session) naming() surface.Naming {
	sess := ss.conn.session()
	var info *mcp.Implementation
	if sess != nil {
		if p := sess.InitializeParams(); p != nil {
			info = p.ClientInfo
		}
	}
	return surface.NamingFor(ss.opts.ClientPrefix, info)
}

// namingOf is how the client of req names mcpgw's tools. A session's
// client said who it is once, in initialize; a conversation serves every
// client that describes it alike, and each request says who sends it (in
// its _meta, which the SDK keeps as the request's own InitializeParams).
func (ss *session) namingOf(req mcp.Request) surface.Naming {
	if ss.sessionless && req != nil {
		if sess, ok := req.GetSession().(*mcp.ServerSession); ok && sess != nil {
			if p := sess.InitializeParams(); p != nil {
				return surface.NamingFor(ss.opts.ClientPrefix, p.ClientInfo)
			}
		}
	}
	return ss.naming()
}

// ResolveName implements dispatch.Caller: it returns mcpgw's name for a tool the model named either way.
func (ss *session) ResolveName(v *registry.View, name string) string {
	if _, ok := v.Lookup(name); ok {
		return name
	}
	if t, ok := ss.naming().Lookup(v, name); ok {
		return t.Name
	}
	return name
}

// view is the catalogue as this session sees it: the daemon's, or its
// project overlay's.
func (ss *session) View() *registry.View { return ss.gw.catalog.ViewFor(ss.overlay.Load()) }

// register tracks an initialised session until it ends.
func (s *Hub) register(ss *session, sess *mcp.ServerSession) {
	ss.conn.mu.Lock()
	already := ss.conn.joined
	ss.conn.joined = true
	ss.conn.ss = sess
	if p := sess.InitializeParams(); p != nil {
		ss.conn.protocol = p.ProtocolVersion // the fast path's (prepareFast)
	}
	ss.conn.sdkSeen = time.Now()
	if ss.conn.initTimer != nil {
		// Initialized: nothing to expire, and the timer would hold the
		// session (and its server) for initTimeout after it ends.
		ss.conn.initTimer.Stop()
		ss.conn.initTimer = nil
	}
	ss.conn.mu.Unlock()
	if already {
		return
	}
	if !s.join(ss, sess.ID()) {
		sess.Close()
	}
}

// join makes ss one of the daemon's sessions, known by httpID if it has
// one; false if the daemon is closing.
func (s *Hub) join(ss *session, httpID string) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.sessions[ss] = struct{}{}
	if httpID != "" {
		ss.httpID = httpID
		s.byHTTPID[httpID] = ss
	}
	s.wg.Add(1)
	s.mu.Unlock()
	s.metrics.sessions.Inc()
	// Catalogue changes between the session's creation and now were not
	// sent to it: catch up.
	ss.syncTools(ss.View())
	if ss.overlay.Load() != nil {
		s.reconcile() // its project's servers join the pool
	}
	return true
}

// unregister is the end of a registered session: its transport says when
// (ServeSession once the session's Wait returns, HTTPSessionClosed for
// HTTP sessions), so that no goroutine waits on each session for it. A
// session not registered, or already gone, is left alone.
func (s *Hub) unregister(ss *session) {
	s.mu.Lock()
	if _, ok := s.sessions[ss]; !ok {
		s.mu.Unlock()
		return
	}
	delete(s.sessions, ss)
	if ss.httpID != "" {
		delete(s.byHTTPID, ss.httpID)
		s.transports.Events().Forget(ss.httpID)
	}
	closed := s.closed
	s.mu.Unlock()
	defer s.wg.Done()
	ss.cancel()
	s.pool.EndSession(ss.key)
	s.dropSessionSubscriptions(ss)
	s.metrics.sessions.Dec()
	if ss.overlay.Load() != nil && !closed {
		s.reconcile() // servers only it used close
	}
}

// used notes that the session called a tool of server.
func (ss *session) Used(server string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.servers == nil {
		ss.servers = map[string]bool{}
	}
	ss.servers[server] = true
}

// expireUninitialized closes the session if its client has not finished
// initializing it (see initTimeout).
func (ss *session) expireUninitialized() {
	initialized := ss.conn.session() != nil
	if initialized {
		return
	}
	for sess := range ss.server.Sessions() {
		sess.Close()
	}
	ss.cancel()
}

// resourceTools reports whether a server's resources are listed as tools
// outside the mcp tool: only when its config says "exposeResources": true.
func resourceTools(v *registry.View, server string) bool {
	srv := v.Config.Servers[server]
	return srv != nil && srv.ExposeResources != nil && *srv.ExposeResources
}

// wanted returns the upstream tools the session should list, by gateway
// name, its client having declared MCP Apps if ui.
func (ss *session) wanted(v *registry.View, ui bool) map[string]*registry.Tool {
	out := make(map[string]*registry.Tool)
	var appOnly []*registry.Tool
	for _, t := range v.Tools {
		switch {
		case t.AppOnly():
			appOnly = append(appOnly, t)
		case t.Resource != nil && !resourceTools(v, t.Server):
			// Resources reach the session as resources; as tools only in
			// proxy mode (the mcp tool), or where the server asks for it.
		case ss.mode.lists(ss, t), ss.direct.matches(t, v):
			out[t.Name] = t
		}
	}
	// A tool only an app calls is listed to a client that can run apps,
	// beside the listed tools of its server; no model sees it there.
	if ui {
		listed := map[string]bool{}
		for _, t := range out {
			listed[t.Server] = true
		}
		for _, t := range appOnly {
			if listed[t.Server] {
				out[t.Name] = t
			}
		}
	}
	return out
}

// appsMiddleware handles MCP Apps: on initialize it notes whether the
// client declared the extension and lists the app-only tools it may then
// see before it can ask for the list; it serves resources/read of a
// tool's UI resource its server does not list (the SDK knows only listed
// resources), which hosts read by the URI in the tool's _meta.ui.
func (ss *session) appsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize":
			if ir, ok := req.(*mcp.ServerRequest[*mcp.InitializeParams]); ok && ir.Params != nil && ir.Params.Capabilities != nil {
				if _, ui := ir.Params.Capabilities.Extensions[registry.UIExtension]; ui {
					ss.conn.mu.Lock()
					ss.conn.ui = true
					ss.conn.mu.Unlock()
					ss.syncTools(ss.View())
				}
			}
		default:
			ss.noteSessionlessUI(req)
		}
		switch method {
		case "resources/read":
			if rr, ok := req.(*mcp.ReadResourceRequest); ok && rr.Params != nil {
				v := ss.View()
				if r, ok := v.Resource(rr.Params.URI); ok && r.Unlisted {
					return ss.read(ctx, v, r.Server, r.Original, r.URI, r.Original, "", false, readRound(rr))
				}
			}
		}
		return next(ctx, method, req)
	}
}

// noteSessionlessUI notes a 2026-07-28 client on the shim that declares
// MCP Apps: it says so in each request's _meta, not in an initialize (the
// go-sdk keeps the first request's). A conversation's requests are many
// clients', so it lists no tool only an app calls.
func (ss *session) noteSessionlessUI(req mcp.Request) {
	if ss.sessionless {
		return
	}
	ui := ss.conn.declaredUI()
	sess, ok := req.GetSession().(*mcp.ServerSession)
	if ui || !ok {
		return
	}
	p := sess.InitializeParams()
	if p == nil || p.ProtocolVersion < transport.FirstSessionless || p.Capabilities == nil {
		return
	}
	if _, on := p.Capabilities.Extensions[registry.UIExtension]; on {
		ss.conn.mu.Lock()
		ss.conn.ui = true
		ss.conn.mu.Unlock()
		ss.syncTools(ss.View())
	}
}

// cancelMiddleware ends a request's context when the session ends: the
// SDK's Close waits for requests in flight, and a tool call can take
// minutes. The context also names the session as the peer of the upstream
// calls the request makes (upstream.WithPeer).
func (ss *session) cancelMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss.lastActive.Store(time.Now().UnixNano())
		ss.inFlight.Add(1)
		defer func() {
			ss.lastActive.Store(time.Now().UnixNano())
			ss.inFlight.Add(-1)
		}()
		ss.gw.busy()
		ctx, cancel := context.WithCancel(upstream.WithPeer(ctx, ss))
		defer cancel()
		stop := context.AfterFunc(ss.ctx, cancel)
		defer stop()
		return next(ctx, method, req)
	}
}

// relistHold bounds how long a ToolSearch answer waits for the client to
// re-read its tool list: pi-mcp-adapter re-lists 300 ms after
// list_changed.
const relistHold = 1500 * time.Millisecond

// relistGrace is how long after answering the re-list the ToolSearch
// answer still waits: clients apply a new tool list asynchronously.
var relistGrace = 200 * time.Millisecond

// relistMark returns what holdForRelist compares against.
func (ss *session) relistMark() int {
	ss.relist.mu.Lock()
	defer ss.relist.mu.Unlock()
	return ss.relist.lists
}

// holdForRelist waits until the client has listed tools again since mark
// (it was sent list_changed), at most relistHold. Clients send the model's
// next request as soon as they have a tool result; a client that re-lists
// on list_changed only later would offer the model a tool list without
// the tools just activated. A client that does not re-list in time is not
// held again. It returns how long it waited.
func (ss *session) holdForRelist(ctx context.Context, mark int) time.Duration {
	start := time.Now()
	timer := time.NewTimer(relistHold)
	defer timer.Stop()
	for {
		ss.relist.mu.Lock()
		if ss.relist.noRelist || ss.relist.lists > mark {
			ss.relist.mu.Unlock()
			if !ss.relist.noRelist {
				// The list's answer is on its way; let the client apply it
				// before the tool result makes it ask the model again.
				time.Sleep(relistGrace)
			}
			return time.Since(start)
		}
		listed := ss.relist.listed
		ss.relist.mu.Unlock()
		select {
		case <-listed:
		case <-timer.C:
			ss.relist.mu.Lock()
			ss.relist.noRelist = true
			ss.relist.mu.Unlock()
			return time.Since(start)
		case <-ctx.Done():
			return time.Since(start)
		}
	}
}

// directSpec selects direct tools: MCP_DIRECT_TOOLS syntax, a comma- or
// space-separated list of `*`, `server`, `server/tool`, or `__none__`.
type directSpec struct {
	none    bool
	all     bool
	servers map[string]bool
	tools   map[string]bool // "server/tool" (original or gateway name)
}

func parseDirectSpec(s string) directSpec {
	d := directSpec{servers: map[string]bool{}, tools: map[string]bool{}}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }) {
		switch {
		case f == "__none__":
			d.none = true
		case f == "*":
			d.all = true
		case strings.Contains(f, "/"):
			d.tools[f] = true
		default:
			d.servers[f] = true
		}
	}
	return d
}

// selectsAny reports whether d or v's configuration may select any direct
// tool at all.
func (d directSpec) selectsAny(v *registry.View) bool {
	if d.none {
		return false
	}
	if d.all || len(d.servers) > 0 || len(d.tools) > 0 || len(v.Config.Settings.DirectTools) > 0 {
		return true
	}
	for _, sv := range v.Servers {
		if len(sv.Server.DirectTools) > 0 {
			return true
		}
	}
	return false
}

// matches reports whether t is a direct tool: by the spec, or by its
// server's directTools setting, or else the global one (unless the spec
// says __none__).
func (d directSpec) matches(t *registry.Tool, v *registry.View) bool {
	if d.none {
		return false
	}
	if d.all || d.servers[t.Server] || d.tools[t.Server+"/"+t.Original] || d.tools[t.Server+"/"+t.Name] {
		return true
	}
	sv, ok := v.Server(t.Server)
	if !ok {
		return false
	}
	names := sv.Server.DirectTools
	if names == nil {
		names = v.Config.Settings.DirectTools
	}
	for _, n := range names {
		if n == "*" || n == t.Original || n == t.Name {
			return true
		}
	}
	return false
}
