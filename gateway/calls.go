package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/gateway/transport"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// The session as a caller of the one dispatcher (gateway/dispatch): the
// Call an SDK request is read into, and what the dispatcher asks of the
// session (dispatch.Caller) and of the daemon (Resolve, Observer).

var (
	_ dispatch.Caller   = (*session)(nil)
	_ dispatch.Observer = (*Hub)(nil)
)

// sdkToolCall is the Call of a request the SDK delivered for a tool the
// session lists (ViaExposed) or for the mcp tool's tool+args (ViaProxy,
// with name and args read from its arguments).
func (ss *session) sdkToolCall(ctx context.Context, req *mcp.CallToolRequest, name string, args json.RawMessage, r dispatch.Route) *dispatch.Call {
	c := &dispatch.Call{
		Caller:   ss,
		Name:     name,
		Args:     args,
		Route:    r,
		Opts:     progressTo(ctx, req),
		Protocol: sessionProtocol(req),
	}
	if c.Protocol >= transport.FirstSessionless && c.Opts != nil {
		// Protocol 2026-07-28 has no server-to-client request: an
		// upstream's input_required goes to the client as the upstream
		// wrote it, whose answers come back with its next call
		// (SEP-2322): the same call, of a listed tool or through the
		// mcp tool.
		c.Opts.Input = &upstream.InputRound{Responses: req.Params.InputResponses, State: req.Params.RequestState}
	}
	if c.Protocol >= transport.FirstSessionless {
		// The answer to mcpgw's own approval form, on any route.
		c.Answers, c.State = req.Params.InputResponses, req.Params.RequestState
	}
	return c
}

// Upstream implements dispatch.Caller: the upstream that serves srv for
// the session.
func (ss *session) Upstream(srv *registry.Server) *upstream.Upstream {
	return ss.gw.upstreamFor(ss, srv)
}

// Called implements dispatch.Observer.
func (s *Hub) Called(server, user, outcome string, d time.Duration) {
	s.metrics.call(server, user, outcome, d)
	s.latency.add(server, d)
}

// Decided implements dispatch.Observer.
func (s *Hub) Decided(server, approval string) { s.metrics.approval(server, approval) }

// upstreamFor returns the upstream that serves srv for ss: its own, for a
// server with "isolation": "session"; its user's, for one with
// "isolation": "user" in team mode; else the shared one.
func (s *Hub) upstreamFor(ss *session, srv *registry.Server) *upstream.Upstream {
	if key := privateKey(ss, srv); key != "" {
		return s.pool.SessionUpstream(srv, key)
	}
	return s.pool.Upstream(srv)
}

// privateKey is the pool's key of the upstream private to ss that serves
// srv (Pool.SessionUpstream): the session's own key, or its user's; ""
// when the shared upstream serves it.
func privateKey(ss *session, srv *registry.Server) string {
	switch {
	case ss == nil:
	case srv.Isolation == registry.IsolationSession:
		return ss.key
	case srv.Isolation == registry.IsolationUser && ss.User() != "":
		return userUpstreamKey(ss.User())
	}
	return ""
}

// userUpstreamKey is the pool's key of a user's own upstreams
// ("isolation": "user"). A session's key (session.key) never starts so:
// a user's upstreams outlive their sessions, and close when idle.
func userUpstreamKey(user string) string { return "user:" + user }

// Identity implements dispatch.Caller: it names the session and its client on the audit log and the
// approvals list: the shim's session ID, else the HTTP session's, else
// the daemon's own key for it.
func (ss *session) Identity() (id, client string) {
	sess := ss.conn.session()
	id = ss.opts.ID
	if sess != nil {
		if id == "" {
			id = sess.ID()
		}
		if init := sess.InitializeParams(); init != nil && init.ClientInfo != nil {
			client = init.ClientInfo.Name
		}
	}
	if id == "" {
		id = ss.key
	}
	return id, client
}

// sessionProtocol is the protocol version the calling session negotiated,
// or "" when unknown.
func sessionProtocol(req mcp.Request) string {
	if req == nil {
		return ""
	}
	sess, ok := req.GetSession().(*mcp.ServerSession)
	if !ok || sess == nil {
		return ""
	}
	if p := sess.InitializeParams(); p != nil {
		return p.ProtocolVersion
	}
	return ""
}

// CanElicitForm implements dispatch.Caller: whether the session's client
// can answer an elicitation form.
func (ss *session) CanElicitForm() bool {
	_, err := ss.client("elicitation", func(c *mcp.ClientCapabilities) bool {
		e := c.Elicitation
		return e != nil && (e.Form != nil || e.URL == nil)
	})
	return err == nil
}

// Granted implements dispatch.Caller: whether the session holds grant
// key.
func (ss *session) Granted(key string) bool {
	if ss.sessionless {
		return false // see conversation.go
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.grants[key]
}

// Grant implements dispatch.Caller: it records a session-wide grant, kept
// with the session's state, so it survives a daemon restart as the
// session does.
func (ss *session) Grant(key string) {
	if ss.sessionless {
		return // see conversation.go
	}
	ss.mu.Lock()
	if ss.grants == nil {
		ss.grants = make(map[string]bool)
	}
	ss.grants[key] = true
	ss.mu.Unlock()
	ss.gw.saveSessionState(ss)
}

// findTool looks up the tool behind a gateway name, waiting for servers
// being discovered and connecting those whose tools are not known yet if
// it has to; failed is the answer when there is no such tool.
func (s *Hub) findTool(ctx context.Context, v *registry.View, name string) (t *registry.Tool, _ *registry.View, failed *mcp.CallToolResult) {
	t, ok := v.Lookup(name)
	if !ok {
		// Servers being discovered may have it.
		v = s.awaitDiscovery(ctx, v.Config)
		t, ok = v.Lookup(name)
	}
	if !ok {
		// The tool may belong to a server whose tools are not known yet
		// (never connected, nothing cached): connect it, as the call needs it.
		cands, untrusted := serversFor(v, name)
		if len(cands) == 0 && untrusted != nil {
			return nil, v, surface.Errorf("%v", dispatch.Untrusted(untrusted))
		}
		if len(cands) > 0 {
			s.connectAll(ctx, cands, name)
			v = s.catalog.ViewFor(v.Config)
			t, ok = v.Lookup(name)
		}
	}
	if !ok {
		return nil, v, surface.UnknownTool(v, name)
	}
	return t, v, nil
}

// progressTo forwards the upstream's progress for a call to the client,
// under the client's own progress token, when it asked for progress.
func progressTo(ctx context.Context, req *mcp.CallToolRequest) *upstream.CallOptions {
	if req == nil || req.Params == nil || req.Session == nil {
		return nil
	}
	opts := &upstream.CallOptions{Meta: req.Params.Meta}
	token := req.Params.GetProgressToken()
	if token == nil {
		return opts
	}
	opts.OnProgress = func(_ context.Context, p *mcp.ProgressNotificationParams) {
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token, Progress: p.Progress, Total: p.Total, Message: p.Message,
		})
	}
	return opts
}

// connectNow connects srv (bypassing any backoff). What it lists is in
// the catalogue when it returns (through onUpdate, the one way listings
// arrive), so the caller's next lookup sees it.
// A server reached with each user's own credentials is connected as the
// user of ctx, whose credentials it needs.
func (s *Hub) connectNow(ctx context.Context, srv *registry.Server) error {
	up, err := s.connectable(ctx, srv)
	if err != nil {
		return err
	}
	_, err = up.Connect(ctx)
	return err
}

// connectable is the upstream of srv a connect asked by ctx's caller
// connects: the user's own, for a server reached with each user's own
// credentials (tokenExchange, or their own login); else the shared one.
func (s *Hub) connectable(ctx context.Context, srv *registry.Server) (*upstream.Upstream, error) {
	if !s.perUserCredentials(srv) {
		return s.pool.Upstream(srv), nil
	}
	user := userOf(ctx)
	if user == "" {
		return nil, fmt.Errorf("connecting to %q: %w", srv.Name, errNoUser)
	}
	return s.pool.SessionUpstream(srv, userUpstreamKey(user)), nil
}

// serversFor returns the enabled servers with no known tools whose tool
// prefix fits name, and an untrusted server whose prefix fits, if any.
func serversFor(v *registry.View, name string) (cands []*registry.Server, untrusted *registry.Server) {
	for _, sv := range v.Servers {
		if sv.Listing != nil {
			continue
		}
		p := strings.TrimSuffix(registry.ToolName(v.Config.Settings.PrefixOf(sv.Server), sv.Server.Name, "x"), "x")
		if !strings.HasPrefix(name, p) && !strings.HasPrefix(name, sv.Server.Name+"/") {
			continue
		}
		switch {
		case sv.Server.Untrusted:
			untrusted = sv.Server
		case sv.Server.Enabled:
			cands = append(cands, sv.Server)
		}
	}
	return cands, untrusted
}

// connectAll connects servers at once, for a call of tool that needs one
// of them.
func (s *Hub) connectAll(ctx context.Context, servers []*registry.Server, tool string) {
	var wg sync.WaitGroup
	for _, srv := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.connectNow(ctx, srv); err != nil {
				s.log.Debug("connecting for an unknown tool", "server", srv.Name, "tool", tool, "err", err)
			}
		}()
	}
	wg.Wait()
}

// Approvals lists the calls waiting for a decision from the status page
// or `mcpgw approve`.
func (s *Hub) Approvals() []api.PendingApproval { return s.calls.Approvals() }

// Decide allows (grant once, tool or server) or denies the pending
// approval id; by says who: "page" or "cli".
func (s *Hub) Decide(id, grant, by string) (api.PendingApproval, error) {
	return s.calls.Decide(id, grant, by)
}

// ErrNoApproval is the error of a decision on an approval that is not
// (or no longer) pending.
var ErrNoApproval = dispatch.ErrNoApproval
