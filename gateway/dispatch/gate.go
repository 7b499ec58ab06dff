package dispatch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/gateway/audit"
	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/registry"
)

// Approvals: a call of a tool that approveTools names waits for the
// user's yes. The session whose call it is — and no other — is asked with
// an elicitation form when its client can answer one; otherwise the call
// waits, up to settings.approvalTimeoutMs, for a decision on the status
// page or from `mcpgw approve`, and then fails closed. The upstream never
// sees a call that was not allowed.

// Approval choices, as the elicitation form and the page name them.
const (
	grantOnce   = "once"
	grantTool   = "tool"
	grantServer = "server"
	grantDeny   = "deny"
)

// Who decided, on the audit log and the approvals metric.
const (
	bySession     = "session" // a grant made earlier in the session
	byElicitation = "elicitation"
	byPage        = "page"
	byCLI         = "cli"
	byTimeout     = "timeout"
	byLimit       = "limit" // refused: too many calls wait for approval
)

// decision is the answer to an approval.
type decision struct {
	grant string // grantOnce, grantTool, grantServer or grantDeny
	by    string
	why   string // a refusal's reason (by byLimit)
	// input is the call's answer when the decision is the client's, to
	// be asked in that answer (protocol 2026-07-28; see inputgate.go).
	input *mcp.CallToolResult
}

func (d decision) allowed() bool { return d.grant != grantDeny && d.grant != "" }

// ApprovalWords are every auditWord: the decisions the audit log and
// mcpgw_approvals_total name.
var ApprovalWords = []string{"allowed", "allowed_tool", "allowed_server", "denied", "timeout", "refused"}

// auditWord is the decision as the audit log and the metric name it.
func (d decision) auditWord() string {
	if d.by == byLimit {
		return "refused"
	}
	switch d.grant {
	case grantOnce:
		return "allowed"
	case grantTool:
		return "allowed_tool"
	case grantServer:
		return "allowed_server"
	case "":
		return "timeout"
	}
	return "denied"
}

// Approvals lists the calls waiting for a decision from the status page
// or `mcpgw approve`, outside team mode (ApprovalsOf "").
func (d *Dispatcher) Approvals() []api.PendingApproval { return d.pending.List("") }

// ApprovalsOf lists user's calls waiting for a decision: in team mode
// nobody sees another user's ("" outside team mode).
func (d *Dispatcher) ApprovalsOf(user string) []api.PendingApproval { return d.pending.List(user) }

// Decide allows (grant once, tool or server) or denies the pending
// approval id; by says who: "page" or "cli". It is DecideAs "".
func (d *Dispatcher) Decide(id, grant, by string) (api.PendingApproval, error) {
	return d.DecideAs("", id, grant, by)
}

// DecideAs is Decide by user, who decides only calls of theirs: another
// user's approval is ErrNoApproval, as if there were none.
func (d *Dispatcher) DecideAs(user, id, grant, by string) (api.PendingApproval, error) {
	switch grant {
	case grantOnce, grantTool, grantServer, grantDeny:
	default:
		return api.PendingApproval{}, fmt.Errorf("decision %q is not one of once, tool, server, deny", grant)
	}
	return d.pending.Decide(user, id, Decision{Grant: grant, By: by})
}

// gate decides whether the call c of t on srv with args (what the
// upstream will be sent) may go on; it returns the answer to give
// instead when it may not. rec is the call's audit record,
// given the approval's outcome.
func (d *Dispatcher) gate(ctx context.Context, c *Call, v *registry.View, t *registry.Tool, srv *registry.Server, args json.RawMessage, rec *audit.Record) (refused *mcp.CallToolResult) {
	rule, need := v.NeedsApproval(t)
	if !need {
		return nil
	}
	rec.Rule = rule.Field + " = " + rule.Value
	dec := granted(c.Caller, t, srv)
	byInput := asksByInput(c)
	if !dec.allowed() && byInput {
		// A further round of a call the client's form allowed.
		if id, ok := d.inputs.approvedFor(inputCall(c, srv, t, args)); ok {
			c.inputApproval, dec = id, decision{grant: grantOnce, by: bySession}
		}
	}
	switch {
	case dec.allowed():
	case byInput:
		dec = d.askByInput(c, v, t, srv, args, rec.Rule)
	default:
		dec = d.ask(ctx, c, v, t, srv, args, rec)
	}
	if dec.input != nil {
		rec.Outcome = "input_required"
		return dec.input
	}
	rec.Approval, rec.DecidedBy = dec.auditWord(), dec.by
	d.o.Observer.Decided(srv.Name, rec.Approval)
	if dec.by != bySession {
		d.auditWrite(v, audit.Record{
			Event: audit.EventApproval, Session: rec.Session, Client: rec.Client, User: rec.User, Server: srv.Name, Tool: rec.Tool, Method: rec.Method,
			Script: rec.Script, Args: rec.Args, Approval: rec.Approval, DecidedBy: dec.by, Rule: rec.Rule,
		})
	}
	switch {
	case dec.allowed():
		grant(c.Caller, t, srv, dec.grant)
		return nil
	case ctx.Err() != nil:
		rec.Outcome = "canceled"
		return surface.Errorf("The call of %s was cancelled while it waited for approval.", t.Name)
	case dec.by == byLimit:
		rec.Outcome = "approval_limit"
		return surface.Errorf("approval_limit: calling %s on server %s needs the user's approval (%s), and %s. "+
			"Wait for those calls to be decided, then call again.", t.Original, srv.Name, rec.Rule, dec.why)
	case dec.grant == "":
		rec.Outcome = "approval_required"
		return surface.Errorf("approval_required: calling %s on server %s needs the user's approval (%s), and none came within %s. "+
			"The user can approve waiting calls on mcpgw's status page or with `mcpgw approve --list` and `mcpgw approve ID`; ask them to, then call again.",
			t.Original, srv.Name, rec.Rule, approvalTimeout(v))
	default:
		rec.Outcome = "denied"
		return surface.Errorf("The user denied the call of %s on server %s (decided by %s). Do not retry it unless the user asks.", t.Original, srv.Name, dec.by)
	}
}

// approvalTimeout resolves settings.approvalTimeoutMs.
func approvalTimeout(v *registry.View) time.Duration {
	if d := v.Config.Settings.ApprovalTimeout; d > 0 {
		return d
	}
	return registry.DefaultApprovalTimeout
}

// ask gets a decision on the call: from the session's client, when it
// can answer an elicitation form; else from the page or the CLI, waiting
// up to the approval timeout (a zero decision: none came). The call is
// listed as pending while its session is asked too, so that the page and
// `mcpgw approve --list --full` show the whole of what the form cuts, and
// may decide it.
func (d *Dispatcher) ask(ctx context.Context, c *Call, v *registry.View, t *registry.Tool, srv *registry.Server, args json.RawMessage, rec *audit.Record) decision {
	view := argsSummary(args)
	p := &api.PendingApproval{
		ID:        newApprovalID(),
		Session:   rec.Session,
		Client:    rec.Client,
		User:      rec.User,
		Server:    srv.Name,
		Tool:      t.Original,
		Args:      view.listed(),
		Rule:      rec.Rule,
		Since:     time.Now(),
		InSession: c.Caller.CanElicitForm(),
	}
	wait := approvalTimeout(v)
	if !p.InSession {
		p.Deadline = p.Since.Add(wait)
	}
	decided, why := d.pending.Add(*p, args, v.Config.Settings.Limits.Resolved())
	if why != "" {
		return decision{by: byLimit, why: why}
	}
	defer d.pending.Remove(p.ID)
	if p.InSession {
		if dec, ok := d.askSession(ctx, c, p, decided, approvalForm(srv.Name, t.Original, view, rec.Rule)); ok {
			return dec
		}
		p.InSession, p.Deadline = false, time.Now().Add(wait)
		d.pending.WaitOutside(p.ID, p.Deadline)
	}
	d.log.Warn("tool call waits for approval: approve it on the status page or with `mcpgw approve "+p.ID+"`",
		"id", p.ID, "server", srv.Name, "tool", t.Original, "session", rec.Session, "timeout", wait)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	var tick <-chan time.Time
	if c.Opts != nil && c.Opts.OnProgress != nil {
		t := time.NewTicker(approvalProgressEvery)
		defer t.Stop()
		tick = t.C
		c.Opts.OnProgress(ctx, approvalProgress(p, 0))
	}
	for n := 1; ; n++ {
		select {
		case dec := <-decided:
			return dec.decision()
		case <-timer.C:
			return decision{by: byTimeout}
		case <-ctx.Done():
			return decision{grant: grantDeny, by: "client"}
		case <-tick:
			c.Opts.OnProgress(ctx, approvalProgress(p, n))
		}
	}
}

// askSession asks the call's session with form; the page or the CLI may
// decide first, which withdraws the form. ok is false when the client
// could not be asked (the call then waits for the page or the CLI).
func (d *Dispatcher) askSession(ctx context.Context, c *Call, p *api.PendingApproval, decided <-chan Decision, form *mcp.ElicitParams) (_ decision, ok bool) {
	ectx, cancel := context.WithCancel(ctx)
	type answer struct {
		res *mcp.ElicitResult
		err error
	}
	got := make(chan answer, 1)
	go func() {
		res, err := c.Caller.Elicit(ectx, form)
		got <- answer{res, err}
	}()
	var a answer
	select {
	case a = <-got:
		cancel()
	case dec := <-decided:
		cancel()
		<-got
		return dec.decision(), true
	case <-ctx.Done():
		cancel()
		<-got
		return decision{grant: grantDeny, by: byElicitation}, true
	}
	switch {
	case a.err == nil && a.res.Action == "accept":
		return decision{grant: formGrant(a.res.Content), by: byElicitation}, true
	case a.err == nil: // decline, cancel
		return decision{grant: grantDeny, by: byElicitation}, true
	case ctx.Err() != nil:
		return decision{grant: grantDeny, by: byElicitation}, true
	}
	d.log.Warn("asking for an approval failed; waiting for one from the page or the CLI", "server", p.Server, "tool", p.Tool, "err", a.err)
	return decision{}, false
}

// approvalProgressEvery is how often a waiting call with a progress token
// is told it still waits.
var approvalProgressEvery = 5 * time.Second

func approvalProgress(p *api.PendingApproval, n int) *mcp.ProgressNotificationParams {
	return &mcp.ProgressNotificationParams{
		Progress: float64(n),
		Message: fmt.Sprintf("waiting for the user to approve %s on %s: on mcpgw's status page, or `mcpgw approve %s` (until %s)",
			p.Tool, p.Server, p.ID, p.Deadline.Format(time.TimeOnly)),
	}
}

func newApprovalID() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// approvalForm is the elicitation that asks the session's user. It has
// no default answer but Deny: a client that fills in defaults denies.
func approvalForm(server, tool string, args argsView, rule string) *mcp.ElicitParams {
	msg := fmt.Sprintf("Allow the call of %s on server %s?\n\nArguments (every value sent; secret-looking ones masked):\n%s\n", tool, server, args.text)
	if more := args.leftOut(); more != "" {
		msg += "\n" + more + "\n"
	}
	msg += fmt.Sprintf("\n(asked because of %s)", rule)
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: msg,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"decision": map[string]any{
					"type":      "string",
					"title":     "Decision",
					"enum":      []string{grantOnce, grantTool, grantServer, grantDeny},
					"enumNames": []string{"Allow once", "Allow this tool for this session", "Allow this server for this session", "Deny"},
					"default":   grantDeny,
				},
			},
			"required": []string{"decision"},
		},
	}
}

// granted returns the caller's standing grant for calls of t on srv, if
// it has one.
func granted(c Caller, t *registry.Tool, srv *registry.Server) decision {
	if c.Granted(grantServer+":"+srv.Name) || c.Granted(grantTool+":"+srv.Name+"/"+t.Original) {
		return decision{grant: grantOnce, by: bySession}
	}
	return decision{}
}

// grant gives the caller a session-wide grant g (tool or server) for t on
// srv; once is not kept.
func grant(c Caller, t *registry.Tool, srv *registry.Server, g string) {
	switch g {
	case grantTool:
		c.Grant(grantTool + ":" + srv.Name + "/" + t.Original)
	case grantServer:
		c.Grant(grantServer + ":" + srv.Name)
	}
}
