package dispatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/registry"
)

// Pending keeps the calls that wait for a decision from outside their
// session: the status page or `mcpgw approve`, perhaps on another replica.
// NewMemoryPending keeps them in this process's memory (a daemon without
// team.store); replicas that share approvals give one of their own in
// Options.Pending. Its methods are safe for concurrent use.
type Pending interface {
	// Add lists p, whose call will send args, unless its session already
	// has l.ApprovalsPerSession calls waiting or all sessions
	// l.ApprovalsPerDaemon: then refused says why, naming the setting. The
	// decision on p, whoever makes it and wherever, arrives on decided.
	Add(p api.PendingApproval, args json.RawMessage, l registry.Limits) (decided <-chan Decision, refused string)
	// Remove takes id off the list: its call has its answer, or gave up.
	Remove(id string)
	// WaitOutside notes that id, whose session could not be asked, now
	// waits for the page or the CLI until deadline.
	WaitOutside(id string, deadline time.Time)
	// List returns user's pending approvals ("" outside team mode),
	// oldest first, each with its arguments whole (Full).
	List(user string) []api.PendingApproval
	// Decide answers user's pending approval id and takes it off the
	// list; one that is another user's, or no longer pending, is
	// ErrNoApproval.
	Decide(user, id string, d Decision) (api.PendingApproval, error)
}

// Decision is a decision on a pending approval: Grant is once, tool,
// server or deny; By says who made it, page or cli.
type Decision struct {
	Grant string `json:"grant"`
	By    string `json:"by"`
}

func (d Decision) decision() decision { return decision{grant: d.Grant, by: d.By} }

// ArgsWhole is how List shows a call's arguments in Full: every value
// whole, secret-looking ones masked. A Pending kept elsewhere keeps this
// rather than the arguments.
func ArgsWhole(args json.RawMessage) string { return argsWhole(args) }

// ErrNoApproval is the error of a decision on an approval that is not
// (or no longer) pending.
var ErrNoApproval = errors.New("no such pending approval (it was decided, timed out, or its call was cancelled)")

// NewMemoryPending returns a Pending in this process's memory.
func NewMemoryPending() Pending { return &memoryPending{} }

// memoryPending is Pending in memory.
type memoryPending struct {
	mu      sync.Mutex
	pending map[string]*pendingCall
}

// pendingCall is a call waiting in a memoryPending.
type pendingCall struct {
	api.PendingApproval
	args    json.RawMessage // what the upstream will be sent
	decided chan Decision   // buffered: the first decision wins
}

func (a *memoryPending) Add(pa api.PendingApproval, args json.RawMessage, l registry.Limits) (<-chan Decision, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, q := range a.pending {
		if q.Session == pa.Session {
			n++
		}
	}
	if n >= l.ApprovalsPerSession {
		return nil, fmt.Sprintf("too many calls of this session wait for approval (limit %d, settings.approvalsPerSession)", l.ApprovalsPerSession)
	}
	if len(a.pending) >= l.ApprovalsPerDaemon {
		return nil, fmt.Sprintf("too many calls wait for approval in mcpgw (limit %d, settings.approvalsPerDaemon)", l.ApprovalsPerDaemon)
	}
	if a.pending == nil {
		a.pending = make(map[string]*pendingCall)
	}
	p := &pendingCall{PendingApproval: pa, args: args, decided: make(chan Decision, 1)}
	a.pending[p.ID] = p
	return p.decided, ""
}

func (a *memoryPending) Remove(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.pending, id)
}

func (a *memoryPending) WaitOutside(id string, deadline time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p, ok := a.pending[id]; ok {
		p.InSession, p.Deadline = false, deadline
	}
}

func (a *memoryPending) List(user string) []api.PendingApproval {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]api.PendingApproval, 0, len(a.pending))
	for _, p := range a.pending {
		if p.User != user {
			continue
		}
		pa := p.PendingApproval
		pa.Full = argsWhole(p.args)
		out = append(out, pa)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Since.Before(out[j].Since) })
	return out
}

func (a *memoryPending) Decide(user, id string, d Decision) (api.PendingApproval, error) {
	a.mu.Lock()
	p, ok := a.pending[id]
	ok = ok && p.User == user
	if ok {
		delete(a.pending, id)
	}
	a.mu.Unlock()
	if !ok {
		return api.PendingApproval{}, ErrNoApproval
	}
	p.decided <- d
	return p.PendingApproval, nil
}
