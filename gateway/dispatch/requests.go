package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcpgw/mcpgw/gateway/audit"
	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// Requests of an upstream other than tool calls — a resource read, a
// prompt get, a completion, a subscription — pass here on their way out,
// whoever made them: the session's client (resources/read, prompts/get,
// completion/complete, resources/subscribe) or its model (a prompt through
// the mcp tool). Each is audited; reads and prompt gets pass the same
// approval gate as a tool call, as the tool Request.Gate names.

// Methods of the requests Forward makes.
const (
	MethodReadResource = "resources/read"
	MethodGetPrompt    = "prompts/get"
	MethodComplete     = "completion/complete"
	MethodSubscribe    = "resources/subscribe"
)

// Request is one request of an upstream that is not a tool call.
type Request struct {
	Caller Caller
	Method string // MethodReadResource, MethodGetPrompt, MethodComplete, MethodSubscribe
	Server string // the server's name in the caller's view
	// Name is what the request asks for as its server lists it: the
	// prompt's upstream name, the resource's URI or the template.
	Name string
	// Args are the rest of the request (a prompt's arguments, the URI a
	// template read asks for, a completion's argument): shown to whoever
	// approves it, only digested on the audit log.
	Args json.RawMessage
	// Gate is the request as the approval gate sees it (registry's
	// ResourceTool, PromptTool); nil: the request is never asked about
	// (it only reads what the client already sees, or changes nothing an
	// approval protects), and audited all the same.
	Gate   *registry.Tool
	Opts   *upstream.CallOptions // progress while an approval is awaited
	Script string

	// Outcome is set by Forward: ok, error, timeout, canceled, denied,
	// approval_required.
	Outcome string
}

// Forward decides r and, when it may go on, runs do with the upstream the
// caller names. Every request is written to the audit log, allowed or
// not; a refusal is an error that says why, and do is not run.
func (d *Dispatcher) Forward(ctx context.Context, r *Request, do func(context.Context, *upstream.Upstream) error) error {
	start := time.Now()
	v := r.Caller.View()
	rec := audit.Record{Event: audit.EventCall, Method: r.Method, Server: r.Server, Tool: r.Name, Script: r.Script}
	rec.Session, rec.Client = r.Caller.Identity()
	rec.User = r.Caller.User()
	if d.auditing(v) {
		rec.Args = d.o.Audit.Digest(r.Args)
	}
	finish := func(outcome string, err error) error {
		r.Outcome = outcome
		rec.Outcome, rec.DurationMs = outcome, msSince(start)
		d.auditWrite(v, rec)
		return err
	}
	srv, err := UsableServer(v, r.Server)
	if err != nil {
		return finish("error", err)
	}
	if r.Gate != nil {
		c := &Call{Caller: r.Caller, Name: r.Gate.Name, Args: r.Args, Opts: r.Opts, Script: r.Script}
		if refused := d.gate(ctx, c, v, r.Gate, srv, r.Args, &rec); refused != nil {
			return finish(rec.Outcome, errors.New(surface.ResultText(refused)))
		}
	}
	r.Caller.Used(srv.Name)
	err = do(upstream.WithName(ctx, srv.Name), r.Caller.Upstream(srv))
	return finish(callOutcome(ctx, nil, err), err)
}

// Refused records a request refused before it named anything a server
// offers the caller: a tool call of a name the caller's view has not
// (outcome unknown_tool; method "" or tools/call), or a prompt or
// resource it has not (unknown).
func (d *Dispatcher) Refused(caller Caller, method, name string, args json.RawMessage, outcome string) {
	v := caller.View()
	if !d.auditing(v) {
		return
	}
	if method == "tools/call" {
		method = ""
	}
	rec := audit.Record{Event: audit.EventCall, Method: method, Tool: name, Outcome: outcome, Args: d.o.Audit.Digest(args)}
	rec.Session, rec.Client = caller.Identity()
	rec.User = caller.User()
	d.auditWrite(v, rec)
}
