// Package dispatch is where a tool call is decided: every call of an
// upstream tool, whatever brought it — a tool the client lists itself
// (direct, ToolSearch-activated), the mcp tool, a code-mode script, the
// status page's and the CLI's (sessions of the mcp tool) — is one Call,
// read once from its request by the transport or handler that received
// it and passed to Dispatcher.Dispatch, the one place where a call is
// resolved against the caller's view of the catalogue, checked against
// the policy (the gate, gate.go: approveTools, session grants, the
// caller's elicitation, the page or `mcpgw approve`), written to the
// audit log, routed to its upstream and its result shaped for the route.
package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/audit"
	"github.com/mcpgw/mcpgw/gateway/content"
	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/internal/jsonwire"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// Route says how the caller reached a tool, which decides the shape of
// its result.
type Route int

const (
	// ViaProxy: through the mcp tool, whose results any model can read
	// (structured content made text).
	ViaProxy Route = iota
	// ViaExposed: the client lists the tool itself; its result passes
	// through as its output schema promises.
	ViaExposed
	// ViaScript: a code-mode script's call (names resolved as through
	// the mcp tool); the script reads the structured content.
	ViaScript
)

// Call is one call of an upstream tool.
type Call struct {
	Caller   Caller                // the session; its client is asked for approvals and gets the call's messages
	Name     string                // the tool's gateway name, as the caller wrote it
	Args     json.RawMessage       // as the client sent them (object, JSON string holding one, or nothing)
	Route    Route                 // how the caller reached the tool
	Opts     *upstream.CallOptions // the client's _meta, and where progress goes
	Protocol string                // the protocol version the session negotiated ("" unknown)
	// Relay: the caller can send the upstream's result bytes on as they
	// are, when nothing in them has to change (see content.Relayable).
	Relay bool
	// Script is the ID of the code-mode script that made the call.
	Script string
	// Answers and State are what a 2026-07-28 client sent back with a
	// call it retried after an input_required result: its inputResponses
	// and the requestState it was given (mcpgw's, for an approval form).
	Answers mcp.InputResponseMap
	State   string
	// inputApproval is the ID of the approval its client's form gave the
	// call, held until the call completes (see inputgate.go).
	inputApproval string

	// Outcome is set by Dispatch: ok, tool_error, error, timeout,
	// canceled, denied, approval_required, approval_limit, unknown_tool,
	// invalid_args.
	Outcome string
	// ProtocolErr is set by Dispatch for a call that relays the
	// input_required exchange (Opts.Input) when the upstream answered
	// with a JSON-RPC error: such a caller gets it as it is (a requestState
	// that failed its integrity check, a capability it did not declare),
	// not as a result for the model.
	ProtocolErr *jsonrpc.Error
}

// Caller is the session a call comes from.
type Caller interface {
	// View is the catalogue as the session sees it.
	View() *registry.View
	// ResolveName returns mcpgw's name for a tool the model named the
	// way its client shows mcpgw's tools, or mcpgw's way.
	ResolveName(v *registry.View, name string) string
	// Identity names the session and its client on the audit log and
	// the approvals list.
	Identity() (id, client string)
	// User names who the session belongs to, in team mode: on the audit
	// log, and the only one who sees and decides its pending approvals.
	// "" outside team mode.
	User() string
	// Upstream is the upstream that serves srv for the session.
	Upstream(srv *registry.Server) *upstream.Upstream
	// Used notes that the session called a tool of server.
	Used(server string)
	// Granted reports whether the session holds the grant key
	// ("tool:server/tool", "server:server"); Grant adds one, kept with
	// the session's state.
	Granted(key string) bool
	Grant(key string)
	// CanElicitForm reports whether the session's client can answer an
	// elicitation form, and Elicit asks it one.
	CanElicitForm() bool
	Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
}

// Resolver finds the tool behind a gateway name, waiting for servers
// being discovered and connecting those whose tools are not known yet if
// it has to; failed is the answer when there is no such tool.
type Resolver func(ctx context.Context, v *registry.View, name string) (t *registry.Tool, _ *registry.View, failed *mcp.CallToolResult)

// Observer is told of each call's outcome and each approval decision
// (the daemon's metrics and latencies); user is the caller's, "" outside
// team mode.
type Observer interface {
	Called(server, user, outcome string, d time.Duration)
	Decided(server, approval string)
}

// Options configure a Dispatcher.
type Options struct {
	Logger   *slog.Logger
	Resolve  Resolver
	Observer Observer
	// Audit records each call and decision (settings.audit false turns
	// it off); nil records nothing.
	Audit *audit.Log
	// SaverFor returns what keeps the whole of the caller's results cut
	// at maxOutputBytes, for the caller alone to read; nil (or a nil
	// Saver) cuts without keeping.
	SaverFor func(Caller) content.Saver
	// Pending keeps the calls waiting for the page or the CLI; nil keeps
	// them in this process's memory (NewMemoryPending).
	Pending Pending
}

// Dispatcher makes calls; it also keeps the calls waiting for an
// approval from the page or the CLI.
type Dispatcher struct {
	o       Options
	log     *slog.Logger
	pending Pending
	inputs  inputApprovals // asked of and given by 2026-07-28 clients
}

// New returns a Dispatcher.
func New(o Options) *Dispatcher {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pending := o.Pending
	if pending == nil {
		pending = NewMemoryPending()
	}
	return &Dispatcher{o: o, log: log, pending: pending}
}

// Dispatch makes the call c. With c.Relay, a result that may reach the
// client exactly as the upstream wrote it is returned as that JSON (raw),
// and res is nil; otherwise res is the result and raw nil. Failures are
// results (IsError) the model can read, never Go errors.
func (d *Dispatcher) Dispatch(ctx context.Context, c *Call) (*mcp.CallToolResult, json.RawMessage) {
	// Three steps, each its own frame: the goroutine that waits for the
	// upstream holds only what routing needs, so that a fast call's whole
	// path stays within a small stack (64 sessions each waiting on a call
	// hold 64 such stacks).
	var a admitted
	if refused := d.admit(ctx, c, &a); refused != nil {
		return refused, nil
	}
	res, raw, err := d.route(ctx, c, &a)
	return d.settle(ctx, c, &a, res, raw, err)
}

// admitted is a call resolved, its arguments checked and the gate passed:
// what routing it and settling its outcome need.
type admitted struct {
	start    time.Time // the call's duration counts discovery and a connect too
	v        *registry.View
	t        *registry.Tool
	srv      *registry.Server
	args     json.RawMessage
	auditing bool
	rec      audit.Record
	opts     *upstream.CallOptions
	limit    int  // of the result's size (surface.OutputLimit), -1 none
	exposed  bool // the caller lists the tool itself
}

// admit resolves c, checks its arguments and passes it through the gate,
// filling a; a call refused on the way is audited, and its answer
// returned.
func (d *Dispatcher) admit(ctx context.Context, c *Call, a *admitted) (refused *mcp.CallToolResult) {
	a.start = time.Now()
	v := c.Caller.View()
	name := c.Name
	if c.Route != ViaExposed {
		name = c.Caller.ResolveName(v, name)
	}
	t, v, failed := d.o.Resolve(ctx, v, name)
	if failed == nil && t.AppOnly() && c.Route != ViaExposed {
		// Only the app of an MCP Apps host calls it, as a listed tool.
		failed = surface.UnknownTool(v, name)
	}
	// A call refused here is audited too: what a model tried and was
	// not allowed is as much the user's business as what it did.
	a.v, a.t, a.auditing = v, t, d.auditing(v)
	rec := &a.rec
	*rec = audit.Record{Event: audit.EventCall, Tool: name, Script: c.Script}
	rec.Session, rec.Client = c.Caller.Identity()
	rec.User = c.Caller.User()
	refuse := func(outcome string, args []byte) {
		c.Outcome = outcome
		if a.auditing {
			rec.Outcome, rec.Args, rec.DurationMs = outcome, d.o.Audit.Digest(args), msSince(a.start)
			d.auditWrite(v, *rec)
		}
	}
	if failed != nil {
		refuse("unknown_tool", c.Args)
		return failed
	}
	rec.Server, rec.Tool = t.Server, t.Original
	args, problem := surface.CheckArgs(t, c.Args)
	if problem != "" {
		refuse("invalid_args", c.Args)
		return surface.Errorf("%s\n\n%s", problem, surface.Params(t))
	}
	srv, err := UsableServer(v, t.Server)
	if err != nil {
		refuse("error", args)
		return surface.Errorf("%v", err)
	}
	if a.auditing {
		rec.Args = d.o.Audit.Digest(args)
	}
	if refused := d.gate(ctx, c, v, t, srv, args, rec); refused != nil {
		c.Outcome = rec.Outcome
		rec.DurationMs = msSince(a.start)
		d.auditWrite(v, *rec)
		return refused
	}
	a.srv, a.args = srv, args
	a.exposed = c.Route != ViaProxy
	a.limit = surface.OutputLimit(v.Config.Settings.MaxOutputBytes)
	if c.Route == ViaScript {
		a.limit = -1 // a script has its own budget for what it reads
	}
	opts := c.Opts
	if opts == nil {
		opts = &upstream.CallOptions{}
	}
	if opts.Input != nil && OwnInputState(opts.Input.State) {
		// The client answered mcpgw's form: the upstream's rounds start.
		opts.Input = &upstream.InputRound{Capabilities: opts.Input.Capabilities}
	}
	// The entry called through decides: two entries for one upstream
	// share its process, not their timeouts.
	opts.Timeout = srv.RequestTimeout
	opts.As = srv.Name // counted under the name called, an alias's too
	a.opts = opts
	return nil
}

// route makes the admitted call on its upstream.
func (d *Dispatcher) route(ctx context.Context, c *Call, a *admitted) (res *mcp.CallToolResult, raw json.RawMessage, err error) {
	u := c.Caller.Upstream(a.srv)
	c.Caller.Used(a.srv.Name)
	switch {
	case a.t.Resource != nil:
		var rr *mcp.ReadResourceResult
		// Counted under the name called, an alias's too, as calls are
		// (opts.As).
		rr, err = u.ReadResource(upstream.WithName(ctx, a.srv.Name), a.t.Resource.URI, a.opts.Input)
		switch {
		case err == nil && rr.NeedsInput():
			// Relayed (Opts.Input) as a tool's request for input is: the
			// caller's retry of the call brings the answers to the read.
			res = &mcp.CallToolResult{InputRequests: rr.InputRequests, RequestState: rr.RequestState}
		case err == nil:
			res = content.FromResource(rr)
		}
	case c.Relay:
		raw, err = u.CallRaw(ctx, a.t.Original, a.args, a.opts)
		if err == nil && !content.Relayable(raw, c.Protocol, a.limit, a.exposed) {
			res = new(mcp.CallToolResult)
			err = upstream.DecodeResult(raw, res)
			raw = nil
		}
	default:
		res, err = u.Call(ctx, a.t.Original, a.args, a.opts)
	}
	return res, raw, err
}

// settle counts and audits the outcome of the routed call and shapes its
// result for the caller.
func (d *Dispatcher) settle(ctx context.Context, c *Call, a *admitted, res *mcp.CallToolResult, raw json.RawMessage, err error) (*mcp.CallToolResult, json.RawMessage) {
	elapsed := time.Since(a.start)
	if c.inputApproval != "" && (err != nil || !(needsInput(res) || raw != nil && rawNeedsInput(raw))) {
		d.inputs.remove(c.inputApproval) // the call is over: its approval with it
	}
	outcome := callOutcome(ctx, res, err)
	c.Outcome = outcome
	d.o.Observer.Called(a.srv.Name, c.Caller.User(), outcome, elapsed)
	if a.auditing {
		a.rec.Outcome, a.rec.DurationMs = outcome, msSince(a.start)
		d.auditWrite(a.v, a.rec)
	}
	t := a.t
	if err != nil {
		d.log.Warn("tool call", "server", a.srv.Name, "tool", t.Original, "duration", elapsed, "err", err)
		var jerr *jsonrpc.Error
		if a.opts.Input != nil && errors.As(err, &jerr) {
			c.ProtocolErr = jerr
		}
		return surface.Errorf("Calling %s on server %s: %v\n\n%s", t.Original, a.srv.Name, err, surface.Params(t)), nil
	}
	if raw != nil {
		// As DecodeResult does: the client's protocol has no resultType.
		// raw is this call's alone (CallRaw).
		return nil, jsonwire.Delete(raw, "resultType")
	}
	if needsInput(res) {
		// An upstream's input_required relayed to the caller (Opts.Input):
		// its requests and state go back as the upstream wrote them, on
		// every route.
		return res, nil
	}
	var save content.Saver
	if d.o.SaverFor != nil {
		save = d.o.SaverFor(c.Caller)
	}
	return surface.Shape(res, t, c.Protocol, a.exposed, a.limit, save), nil
}

// auditing reports whether calls are recorded: a log, and settings.audit
// not false.
func (d *Dispatcher) auditing(v *registry.View) bool {
	return d.o.Audit != nil && (v.Config.Settings.Audit == nil || *v.Config.Settings.Audit)
}

// auditWrite records r, if calls are recorded.
func (d *Dispatcher) auditWrite(v *registry.View, r audit.Record) {
	if !d.auditing(v) {
		return
	}
	if err := d.o.Audit.Write(r); err != nil {
		d.log.Error("writing the audit log", "err", err)
	}
}

func msSince(t time.Time) float64 {
	return float64(time.Since(t).Microseconds()) / 1000
}

// Result is Dispatch for a caller that takes a result value.
func (d *Dispatcher) Result(ctx context.Context, c *Call) *mcp.CallToolResult {
	c.Relay = false
	res, _ := d.Dispatch(ctx, c)
	return res
}

// callOutcome is a call's outcome label on the call metric.
func callOutcome(ctx context.Context, res *mcp.CallToolResult, err error) string {
	switch {
	case err != nil && ctx.Err() != nil:
		return "canceled"
	case isTimeout(err):
		return "timeout"
	case err != nil:
		return "error"
	case res != nil && res.IsError:
		return "tool_error"
	}
	return "ok"
}

// isTimeout reports whether err is an upstream's timeout; errors.As
// would make every call allocate its target, errors or not.
func isTimeout(err error) bool {
	_, ok := errors.AsType[*upstream.TimeoutError](err)
	return ok
}

// UsableServer returns the server name of v, or why it may not be used:
// no longer configured, from an untrusted project, or disabled.
func UsableServer(v *registry.View, name string) (*registry.Server, error) {
	sv, ok := v.Server(name)
	if !ok {
		return nil, refusal(fmt.Sprintf("Server %q is no longer configured.", name))
	}
	srv := sv.Server
	switch {
	case srv.Untrusted:
		return nil, Untrusted(srv)
	case !srv.Enabled:
		return nil, refusal(fmt.Sprintf("Server %q is disabled in %s.", srv.Name, srv.Source))
	}
	return srv, nil
}

// Untrusted is why a server of an untrusted project is not used.
func Untrusted(srv *registry.Server) error {
	return refusal(surface.UntrustedServer(srv.Name, srv.Source))
}

// refusal is why a server may not be used, in sentences written for the
// person or model that asked.
type refusal string

func (r refusal) Error() string { return string(r) }

// needsInput reports whether res asks the caller for input: an
// upstream's result that says so, or a resource read's request for input
// made a tool's.
func needsInput(res *mcp.CallToolResult) bool {
	return res != nil && (res.NeedsInput() || len(res.InputRequests) > 0)
}

// rawNeedsInput reports whether the result bytes raw ask the client for
// input (resultType input_required) instead of ending the call.
func rawNeedsInput(raw json.RawMessage) bool {
	rt, ok := jsonwire.Member(raw, "resultType")
	if !ok {
		return false
	}
	s, _ := jsonwire.String(rt)
	return s == "input_required"
}
