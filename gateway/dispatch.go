package gateway

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/audit"
	"github.com/mcpgw/mcpgw/gateway/content"
	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/internal/jsonwire"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// Every call of an upstream tool, whatever brought it — a tool the client
// lists itself (direct, ToolSearch-activated), the mcp tool, the status
// page's and the CLI's (both sessions of the mcp tool) — is one toolCall,
// read once from the request and passed to dispatch, the one place where
// a call is resolved, checked against the policy and routed. The SDK's
// path (handlers) and the fast path (fastcall.go) differ only in how the
// request's bytes come in and the result's go out.

// route says how the caller reached a tool, which decides the shape of
// its result.
type route int

const (
	// viaProxy: through the mcp tool, whose results any model can read
	// (structured content made text).
	viaProxy route = iota
	// viaExposed: the client lists the tool itself; its result passes
	// through as its output schema promises.
	viaExposed
	// viaScript: a code-mode script's call (names resolved as through
	// the mcp tool); the script reads the structured content.
	viaScript
)

// toolCall is one call of an upstream tool.
type toolCall struct {
	session  *session              // the caller; its client is asked for approvals and gets the call's messages
	name     string                // the tool's gateway name, as the caller wrote it
	args     json.RawMessage       // as the client sent them (object, JSON string holding one, or nothing)
	route    route                 // how the caller reached the tool
	opts     *upstream.CallOptions // the client's _meta, and where progress goes
	protocol string                // the protocol version the session negotiated ("" unknown)
	// relay: the caller can send the upstream's result bytes on as they
	// are, when nothing in them has to change (see content.Relayable).
	relay bool
	// script is the ID of the code-mode script that made the call.
	script string

	// outcome is set by dispatch: ok, tool_error, error, timeout,
	// canceled, denied, approval_required, unknown_tool, invalid_args.
	outcome string
}

// sdkToolCall is the toolCall of a request the SDK delivered for a tool
// the session lists (viaExposed) or for the mcp tool's tool+args
// (viaProxy, with name and args read from its arguments).
func (ss *session) sdkToolCall(ctx context.Context, req *mcp.CallToolRequest, name string, args json.RawMessage, r route) *toolCall {
	return &toolCall{
		session:  ss,
		name:     name,
		args:     args,
		route:    r,
		opts:     progressTo(ctx, req),
		protocol: sessionProtocol(req),
	}
}

// dispatch makes the call c. With c.relay, a result that may reach the
// client exactly as the upstream wrote it is returned as that JSON (raw),
// and res is nil; otherwise res is the result and raw nil. Failures are
// results (IsError) the model can read, never Go errors.
func (s *Server) dispatch(ctx context.Context, c *toolCall) (res *mcp.CallToolResult, raw json.RawMessage) {
	// The call's duration counts what the caller waits for: discovery and
	// the connect of a server whose tools were not known yet too.
	start := time.Now()
	v := c.session.view()
	name := c.name
	if c.route != viaExposed {
		name = c.session.resolveName(v, name)
	}
	t, v, failed := s.findTool(ctx, v, name)
	if failed == nil && t.AppOnly() && c.route != viaExposed {
		// Only the app of an MCP Apps host calls it, as a listed tool.
		failed = surface.UnknownTool(v, name)
	}
	if failed != nil {
		c.outcome = "unknown_tool"
		return failed, nil
	}
	args, problem := surface.CheckArgs(t, c.args)
	if problem != "" {
		c.outcome = "invalid_args"
		return surface.Errorf("%s\n\n%s", problem, surface.Params(t)), nil
	}
	srv, err := usableServer(v, t.Server)
	if err != nil {
		c.outcome = "error"
		return surface.Errorf("%v", err), nil
	}
	rec := audit.Record{Event: audit.EventCall, Server: srv.Name, Tool: t.Original, Script: c.script}
	rec.Session, rec.Client = c.session.identity()
	auditing := s.auditing(v)
	if auditing {
		rec.Args = s.opts.Audit.Digest(args)
	}
	if refused := s.gate(ctx, c, v, t, srv, &rec); refused != nil {
		c.outcome = rec.Outcome
		rec.DurationMs = msSince(start)
		s.auditWrite(v, rec)
		return refused, nil
	}
	exposed := c.route != viaProxy
	u := s.upstreamFor(c.session, srv)
	c.session.used(srv.Name)
	limit := surface.OutputLimit(v.Config.Settings.MaxOutputBytes)
	if c.route == viaScript {
		limit = -1 // a script has its own budget for what it reads
	}
	opts := c.opts
	if opts == nil {
		opts = &upstream.CallOptions{}
	}
	// The entry called through decides: two entries for one upstream
	// share its process, not their timeouts.
	opts.Timeout = srv.RequestTimeout
	switch {
	case t.Resource != nil:
		var rr *mcp.ReadResourceResult
		rr, err = u.ReadResource(ctx, t.Resource.URI)
		if err == nil {
			res = content.FromResource(rr)
		}
	case c.relay:
		raw, err = u.CallRaw(ctx, t.Original, args, opts)
		if err == nil && !content.Relayable(raw, c.protocol, limit, exposed) {
			res = new(mcp.CallToolResult)
			err = upstream.DecodeResult(raw, res)
			raw = nil
		}
	default:
		res, err = u.Call(ctx, t.Original, args, opts)
	}
	elapsed := time.Since(start)
	outcome := callOutcome(ctx, res, err)
	c.outcome = outcome
	s.metrics.call(srv.Name, outcome, elapsed)
	s.latency.add(srv.Name, elapsed)
	if auditing {
		rec.Outcome, rec.DurationMs = outcome, msSince(start)
		s.auditWrite(v, rec)
	}
	if err != nil {
		s.log.Warn("tool call", "server", srv.Name, "tool", t.Original, "duration", elapsed, "err", err)
		return surface.Errorf("Calling %s on server %s: %v\n\n%s", t.Original, srv.Name, err, surface.Params(t)), nil
	}
	if raw != nil {
		// As DecodeResult does: the client's protocol has no resultType.
		return nil, jsonwire.Without(raw, "resultType")
	}
	return surface.Shape(res, t, c.protocol, exposed, limit, s.saver), nil
}

// auditing reports whether calls are recorded: a log, and settings.audit
// not false.
func (s *Server) auditing(v *registry.View) bool {
	return s.opts.Audit != nil && (v.Config.Settings.Audit == nil || *v.Config.Settings.Audit)
}

// auditWrite records r, if calls are recorded.
func (s *Server) auditWrite(v *registry.View, r audit.Record) {
	if !s.auditing(v) {
		return
	}
	if err := s.opts.Audit.Write(r); err != nil {
		s.log.Error("writing the audit log", "err", err)
	}
}

func msSince(t time.Time) float64 {
	return float64(time.Since(t).Microseconds()) / 1000
}

// callResult is dispatch for a caller that takes a result value.
func (s *Server) callResult(ctx context.Context, c *toolCall) *mcp.CallToolResult {
	c.relay = false
	res, _ := s.dispatch(ctx, c)
	return res
}

// upstreamFor returns the upstream that serves srv for ss: its own, for a
// server with "isolation": "session", else the shared one.
func (s *Server) upstreamFor(ss *session, srv *registry.Server) *upstream.Upstream {
	if srv.Isolation == registry.IsolationSession && ss != nil {
		return s.pool.SessionUpstream(srv, ss.key)
	}
	return s.pool.Upstream(srv)
}

// identity names the session and its client on the audit log and the
// approvals list: the shim's session ID, else the HTTP session's, else
// the daemon's own key for it.
func (ss *session) identity() (id, client string) {
	ss.mu.Lock()
	sess := ss.ss
	ss.mu.Unlock()
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
func sessionProtocol(req *mcp.CallToolRequest) string {
	if req == nil || req.Session == nil {
		return ""
	}
	if p := req.Session.InitializeParams(); p != nil {
		return p.ProtocolVersion
	}
	return ""
}
