package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/identity"
	"github.com/mcpgw/mcpgw/gateway/transport"
	"github.com/mcpgw/mcpgw/registry"
)

// Replicas (team mode with team.store, DESIGN decision 16): a 2025-era
// HTTP session is kept in the store from its initialize on — how its
// client described and initialized it, what ToolSearch activated and
// what was granted in it — so that every replica can answer it. A
// replica that gets a request for a session it does not have makes it
// from the store (gateway/transport/shared.go replays the client's
// initialize to the go-sdk); one that has it brings its copy up to date
// first, so that a tool activated through one replica is listed and
// callable through the next. Activations and grants only grow in a
// session, so copies merge by union, and every write counts a revision.
//
// The store is keyed by user and session: one user's request never finds
// another's session. Nothing of this runs without team.store.

// SessionStore is where HTTP sessions are kept for every replica
// (teamstore.Sessions). Its methods are safe for concurrent use; an error
// is the store's and says so.
type SessionStore interface {
	// Get returns what is kept for user's session id, nil for nothing,
	// and starts its time to live again.
	Get(ctx context.Context, user, id string) ([]byte, error)
	// Update sets what is kept for user's session id to merge(what is
	// kept, nil for nothing), atomically against other replicas; merge
	// may run more than once, and its error ends the update.
	Update(ctx context.Context, user, id string, merge func(old []byte) ([]byte, error)) error
	// Delete forgets user's session id.
	Delete(ctx context.Context, user, id string) (existed bool, _ error)
	// Ping says whether the store can be reached.
	Ping(ctx context.Context) error
}

// sharedRecord is what the store keeps of a session.
type sharedRecord struct {
	// How the client described the session (SessionOptions).
	Cwd          string `json:"cwd,omitempty"`
	Mode         string `json:"mode,omitempty"`
	DirectTools  string `json:"directTools,omitempty"`
	ClientPrefix string `json:"clientPrefix,omitempty"`
	// Initialize is the params of the client's initialize.
	Initialize json.RawMessage `json:"initialize"`
	Activated  []string        `json:"activated,omitempty"`
	Grants     []string        `json:"grants,omitempty"`
	// Rev counts the writes of Activated and Grants.
	Rev int64 `json:"rev"`
}

// sharedSessions is the hub's side of sessions kept in the store
// (transport.SharedSessions).
type sharedSessions struct {
	s     *Hub
	store SessionStore

	// mu guards revs: the revision of the kept state each copy on this
	// replica has, by session ID; a session not in it is not kept.
	mu   sync.Mutex
	revs map[string]int64
}

var _ transport.SharedSessions = (*sharedSessions)(nil)

// sharedSessions returns the hub's side of sessions kept in
// Options.Sessions, nil without it.
func (s *Hub) sharedSessions() transport.SharedSessions {
	if s.opts.Sessions == nil {
		return nil
	}
	s.shared = &sharedSessions{s: s, store: s.opts.Sessions, revs: make(map[string]int64)}
	return s.shared
}

// storeTimeout bounds a write to the store made outside a request.
const storeTimeout = 5 * time.Second

// errSessionGone: the store no longer keeps the session.
var errSessionGone = errors.New("the session is no longer kept")

func (c *sharedSessions) rev(id string) (rev int64, kept bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rev, kept = c.revs[id]
	return rev, kept
}

// setRev notes that the copy of id has revision rev, or a later one.
func (c *sharedSessions) setRev(id string, rev int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if have, ok := c.revs[id]; !ok || rev > have {
		c.revs[id] = rev
	}
}

// Opened implements transport.SharedSessions.
func (c *sharedSessions) Opened(ctx context.Context, id string, opts SessionOptions, initialize json.RawMessage) error {
	data, err := json.Marshal(sharedRecord{
		Cwd: opts.Cwd, Mode: string(opts.Mode), DirectTools: opts.DirectTools, ClientPrefix: opts.ClientPrefix,
		Initialize: initialize,
	})
	if err != nil {
		return err
	}
	if err := c.store.Update(ctx, identity.NameOf(opts.User), id, func([]byte) ([]byte, error) { return data, nil }); err != nil {
		return err
	}
	c.setRev(id, 0)
	return nil
}

// Refresh implements transport.SharedSessions.
func (c *sharedSessions) Refresh(ctx context.Context, user, id string) (gone bool, _ error) {
	data, err := c.store.Get(ctx, user, id)
	if err != nil {
		return false, err
	}
	have, kept := c.rev(id)
	if data == nil {
		return kept, nil // ended on another replica, or expired
	}
	var rec sharedRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return false, fmt.Errorf("reading session %s from the team store: %w", id, err)
	}
	if rec.Rev <= have {
		return false, nil
	}
	c.s.mu.Lock()
	ss := c.s.byHTTPID[id]
	c.s.mu.Unlock()
	if ss != nil { // else not initialized here yet: a later request brings it up to date
		c.apply(ss, id, &rec)
	}
	return false, nil
}

// apply adds what rec activated and granted to ss, this replica's copy of
// session id.
func (c *sharedSessions) apply(ss *session, id string, rec *sharedRecord) {
	ss.mu.Lock()
	added := false
	for _, name := range rec.Activated {
		if !ss.activated[name] {
			ss.activated[name] = true
			added = true
		}
	}
	for _, g := range rec.Grants {
		if ss.grants == nil {
			ss.grants = make(map[string]bool)
		}
		ss.grants[g] = true
	}
	ss.mu.Unlock()
	c.setRev(id, rec.Rev)
	if added {
		ss.syncTools(ss.View())
	}
}

// Resume implements transport.SharedSessions.
func (c *sharedSessions) Resume(ctx context.Context, id string, opts SessionOptions) (*mcp.Server, json.RawMessage, error) {
	data, err := c.store.Get(ctx, identity.NameOf(opts.User), id)
	if err != nil || data == nil {
		return nil, nil, err
	}
	var rec sharedRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, nil, fmt.Errorf("reading session %s from the team store: %w", id, err)
	}
	opts.Cwd, opts.Mode, opts.DirectTools, opts.ClientPrefix = rec.Cwd, registry.Mode(rec.Mode), rec.DirectTools, rec.ClientPrefix
	opts.ID, opts.Resume, opts.Secret = "", false, ""
	opts.HTTPID = id
	ss := c.s.newSession(opts, &sessionState{Activated: rec.Activated, Grants: rec.Grants}, false)
	// As OpenHTTPSession: a session whose initialize is not replayed
	// goes when initTimeout has passed.
	wp := weak.Make(ss)
	t := time.AfterFunc(initTimeout, func() {
		if ss := wp.Value(); ss != nil {
			ss.expireUninitialized()
		}
	})
	ss.conn.mu.Lock()
	ss.conn.initTimer = t
	ss.conn.mu.Unlock()
	c.setRev(id, rec.Rev)
	c.s.log.Info("session resumed from the team store", "session", id, "user", identity.NameOf(opts.User),
		"activated", len(rec.Activated), "grants", len(rec.Grants))
	return ss.server, rec.Initialize, nil
}

// End implements transport.SharedSessions.
func (c *sharedSessions) End(ctx context.Context, user, id string) (bool, error) {
	return c.store.Delete(ctx, user, id)
}

// Closed implements transport.SharedSessions.
func (c *sharedSessions) Closed(id string) {
	c.mu.Lock()
	delete(c.revs, id)
	c.mu.Unlock()
}

// Ping implements transport.SharedSessions.
func (c *sharedSessions) Ping(ctx context.Context) error { return c.store.Ping(ctx) }

// saveShared writes what ss, an HTTP session kept in the store, has
// activated and been granted, merged with what the other replicas wrote
// (which ss then has too). It reports whether ss is kept there.
func (s *Hub) saveShared(ss *session) bool {
	c := s.shared
	if c == nil {
		return false
	}
	s.mu.Lock()
	id := ss.httpID
	s.mu.Unlock()
	if _, kept := c.rev(id); id == "" || !kept {
		return false
	}
	ss.mu.Lock()
	activated := make([]string, 0, len(ss.activated))
	for name := range ss.activated {
		activated = append(activated, name)
	}
	grants := make([]string, 0, len(ss.grants))
	for g := range ss.grants {
		grants = append(grants, g)
	}
	ss.mu.Unlock()
	var merged sharedRecord
	ctx, cancel := context.WithTimeout(s.ctx, storeTimeout)
	defer cancel()
	err := c.store.Update(ctx, ss.User(), id, func(old []byte) ([]byte, error) {
		if old == nil {
			return nil, errSessionGone
		}
		merged = sharedRecord{}
		if err := json.Unmarshal(old, &merged); err != nil {
			return nil, err
		}
		merged.Activated = union(merged.Activated, activated)
		merged.Grants = union(merged.Grants, grants)
		merged.Rev++
		return json.Marshal(merged)
	})
	if err != nil {
		s.log.Warn("saving a session's activations and grants in the team store: other replicas do not see them", "session", id, "err", err)
		return true
	}
	c.apply(ss, id, &merged)
	return true
}

// union is a and b, sorted, each once.
func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}
