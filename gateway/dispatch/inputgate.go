package dispatch

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// Approvals of protocol 2026-07-28: a server cannot send its client a
// request while it serves one, so the form is the call's answer
// (resultType input_required, SEP-2322) and the client's answer comes back
// with the same call, retried. What the form approved is kept here, in the
// daemon, under an ID the client echoes as the requestState: the retry
// must come from the same session, for the same tool and the same
// arguments. An allowed call may go through more rounds with its upstream
// (its own input_required), each retried by the client with the upstream's
// state: the approval holds for those until the call completes, and for no
// other call.

// InputApprovalKey is the key of mcpgw's approval form among a result's
// inputRequests.
const InputApprovalKey = "mcpgw_approval"

// inputStatePrefix marks a requestState as mcpgw's own, not an upstream's.
const inputStatePrefix = "mcpgw-approval:"

// inputApproval is an approval asked of, or given by, a 2026-07-28 client.
type inputApproval struct {
	session, server, tool string
	args                  [sha256.Size]byte
	approved              bool      // allowed: the call's further rounds pass
	expires               time.Time // asked: until the approval timeout; approved: until the call completes, or that long
}

type inputApprovals struct {
	mu sync.Mutex
	m  map[string]*inputApproval
}

func (a *inputApprovals) put(id string, p *inputApproval) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	for k, q := range a.m {
		if now.After(q.expires) {
			delete(a.m, k)
		}
	}
	if a.m == nil {
		a.m = make(map[string]*inputApproval)
	}
	a.m[id] = p
}

// take removes and returns the approval id asked of session for the same
// server, tool and arguments; nil when there is none, or it expired.
func (a *inputApprovals) take(id string, want *inputApproval) *inputApproval {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.m[id]
	if p == nil || p.approved || p.session != want.session || p.server != want.server || p.tool != want.tool || p.args != want.args {
		return nil
	}
	delete(a.m, id)
	if time.Now().After(p.expires) {
		return nil
	}
	return p
}

// approvedFor returns the ID of an allowed approval for the same call,
// if one holds.
func (a *inputApprovals) approvedFor(want *inputApproval) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	for id, p := range a.m {
		if p.approved && now.Before(p.expires) && p.session == want.session && p.server == want.server && p.tool == want.tool && p.args == want.args {
			return id, true
		}
	}
	return "", false
}

func (a *inputApprovals) remove(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.m, id)
}

// asksByInput reports whether c's approval is asked in its result: a
// 2026-07-28 caller that answers forms, for a call it made itself (a
// script's calls run in the daemon: their approvals wait for the page or
// the CLI).
func asksByInput(c *Call) bool {
	return c.Protocol >= firstInputRequired && c.Route != ViaScript && c.Caller.CanElicitForm()
}

// firstInputRequired is the first protocol version with input_required.
const firstInputRequired = "2026-07-28"

// OwnInputState reports whether state is one mcpgw gave (its approval),
// not an upstream's: such a retry starts the upstream's rounds afresh.
func OwnInputState(state string) bool { return strings.HasPrefix(state, inputStatePrefix) }

// inputCall is the key an input approval is kept under for c.
func inputCall(c *Call, srv *registry.Server, t *registry.Tool, args json.RawMessage) *inputApproval {
	id, _ := c.Caller.Identity()
	return &inputApproval{session: id, server: srv.Name, tool: t.Original, args: sha256.Sum256(args)}
}

// askByInput decides c from the form's answer its retry carries, or asks
// for one: then the decision carries the input_required result.
func (d *Dispatcher) askByInput(c *Call, v *registry.View, t *registry.Tool, srv *registry.Server, args json.RawMessage, rule string) decision {
	want := inputCall(c, srv, t, args)
	if id, ok := strings.CutPrefix(c.State, inputStatePrefix); ok {
		if p := d.inputs.take(id, want); p != nil {
			answer, _ := c.Answers[InputApprovalKey].(*mcp.ElicitResult)
			dec := decision{grant: grantDeny, by: byElicitation}
			if answer != nil && answer.Action == "accept" {
				dec.grant = formGrant(answer.Content)
			}
			if dec.allowed() {
				p.approved, p.expires = true, time.Now().Add(approvalTimeout(v))
				d.inputs.put(id, p)
				c.inputApproval = id
			}
			return dec
		}
	}
	id := newInputStateID()
	want.expires = time.Now().Add(approvalTimeout(v))
	d.inputs.put(id, want)
	return decision{input: &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{InputApprovalKey: approvalForm(srv.Name, t.Original, argsSummary(args), rule)},
		RequestState:  inputStatePrefix + id,
	}}
}

// newInputStateID names an input approval: unguessable, since whoever
// echoes it with the same call answers the form.
func newInputStateID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// formGrant is the grant an accepted approval form's content names; any
// other answer denies.
func formGrant(content map[string]any) string {
	g, _ := content["decision"].(string)
	switch g {
	case grantOnce, grantTool, grantServer:
		return g
	}
	return grantDeny
}
