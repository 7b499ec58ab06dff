package upstream

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// Defaults for zero registry.Server timeouts.
const (
	DefaultStartupTimeout = 60 * time.Second
	DefaultRequestTimeout = 2 * time.Minute
)

// An Upstream is one supervised connection to an upstream server, shared by
// every caller. Its methods are safe for concurrent use.
type Upstream struct {
	pool    *Pool
	hash    string
	m       *metrics // nil (no series) for a private upstream
	gate    *fairGate
	session string // the session a private upstream serves ("": shared)

	progress progressWatches // calls that report progress (progress.go)

	peerMu       sync.Mutex
	peers        map[Peer]inFlightPeer // peers with calls in flight
	peerIDs      map[int64]Peer        // the same, by related-stream tag
	lastPeerID   int64
	elicitations map[string]Peer // URL elicitations in progress, by ID

	acks subscriptionAcks // Subscribes waiting for the upstream to acknowledge them

	mu        sync.Mutex
	srv       *registry.Server // latest config under the upstream's name
	aliases   []string         // other names of the same identity, sorted
	log       *slog.Logger
	state     State
	since     time.Time
	lastErr   string
	failures  int       // consecutive failed connects
	nextRetry time.Time // no connect before this unless forced
	authErr   *AuthError
	// authRetry, when set, says whether a connect may now get past
	// authErr: a login of the upstream's own user that changed since
	// (made through another replica, say), which nothing else would
	// tell this upstream about.
	authRetry func() bool
	sess      *session
	attempt   *attempt // connect in progress
	inFlight  int
	waiting   int // callers waiting for a connect: the new session is theirs
	lastUsed  time.Time
	idle      *time.Timer
	subs      map[string]bool // URIs callers are subscribed to (subscribe.go)
	snap      *Snapshot
	lastProc  *process // the most recently started process (for Stderr)
	pinned    bool     // pin legacyProtocolVersion (learned)
	httpKind  string   // HTTP transport that worked (learned)
	lost      bool     // the last session ended unexpectedly (for the restarts metric)
	retired   bool
	drained   chan struct{} // while retiring with calls in flight: closed when they finish

	calls, errs          int64
	byName               map[string]Counts // calls and errs by the name they came by
	connects, idleCloses int

	supervising bool          // keep-alive loop running
	wake        chan struct{} // nudges the keep-alive loop (session lost, Connect)
	relisting   bool
	relistAgain bool

	events   []event // OnState/OnUpdate deliveries, in order
	draining bool
	// queued and delivered count events; delivery is closed and replaced
	// as each is delivered (see awaitDelivery).
	queued, delivered uint64
	delivery          chan struct{}
}

// event is one OnState or OnUpdate delivery.
type event struct {
	srv    *registry.Server
	status *Status
	snap   *Snapshot
}

// attempt is a single-flight connect; done is closed when it has finished.
type attempt struct {
	done chan struct{}
	sess *session
	snap *Snapshot
	err  error
	pub  uint64 // the event that publishes snap (see awaitDelivery)
}

// newUpstream returns an idle upstream for srv, shared (session "") or
// private to one session (see Pool.SessionUpstream). Private upstreams
// have no metric series of their own: their label would be their server's.
func newUpstream(p *Pool, srv *registry.Server, session string) *Upstream {
	u := &Upstream{
		pool:    p,
		hash:    srv.Hash,
		m:       p.metrics,
		gate:    newFairGate(maxConcurrency(srv)),
		session: session,
		srv:     srv,
		log:     p.log.With("server", srv.Name),
		state:   StateIdle,
		since:   time.Now(),
		wake:    make(chan struct{}, 1),
	}
	if session != "" {
		u.m = nil
		u.log = u.log.With("session", session)
	}
	u.m.add(srv.Name, StateIdle)
	return u
}

func (u *Upstream) logger() *slog.Logger {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.log
}

// unlock releases u.mu and, if events were queued, starts their delivery.
// Every critical section that may change state ends with it.
func (u *Upstream) unlock() {
	start := len(u.events) > 0 && !u.draining
	if start {
		u.draining = true
	}
	u.mu.Unlock()
	if start && !u.pool.goTracked(u.deliver) {
		u.deliver() // the pool is closing: deliver the last events here
	}
}

// deliver runs OnState/OnUpdate for queued events, in order, on a pool
// goroutine: callbacks never run under u.mu, never concurrently for one
// upstream, never on a caller's goroutine, and may call back into the
// Upstream. The caller has set u.draining.
func (u *Upstream) deliver() {
	u.mu.Lock()
	for len(u.events) > 0 {
		ev := u.events[0]
		u.events = u.events[1:]
		u.mu.Unlock()
		switch {
		case ev.status != nil && u.pool.opts.OnState != nil:
			u.pool.opts.OnState(ev.srv, *ev.status)
		case ev.snap != nil && u.pool.opts.OnUpdate != nil:
			u.pool.opts.OnUpdate(ev.srv, ev.snap)
		}
		u.mu.Lock()
		u.delivered++
		if u.delivery != nil {
			close(u.delivery)
			u.delivery = nil
		}
	}
	u.draining = false
	u.mu.Unlock()
}

// setStateLocked moves to st, recording errMsg as LastError (kept when
// empty unless connected), and queues OnState.
func (u *Upstream) setStateLocked(st State, errMsg string) {
	if errMsg != "" {
		u.lastErr = errMsg
	} else if st == StateConnected {
		u.lastErr = ""
	}
	if st != u.state {
		u.state = st
		u.since = time.Now()
		u.m.setState(u.srv.Name, st)
	}
	if u.pool.opts.OnState != nil {
		s := u.statusLocked()
		u.queueLocked(event{srv: u.srv, status: &s})
	}
}

// publishLocked stores snap and queues OnUpdate; it returns the event's
// number, for awaitDelivery (0: nothing to wait for).
func (u *Upstream) publishLocked(snap *Snapshot) uint64 {
	u.snap = snap
	if u.pool.opts.OnUpdate == nil {
		return 0
	}
	return u.queueLocked(event{srv: u.srv, snap: snap})
}

// queueLocked queues ev for delivery and returns its number.
func (u *Upstream) queueLocked(ev event) uint64 {
	u.events = append(u.events, ev)
	u.queued++
	return u.queued
}

// awaitDelivery waits until event n has been delivered: a Connect returns
// once OnUpdate has had its lists, so that what the caller does next
// (look a tool up, list) sees them. The one path by which lists reach
// the caller's catalogue stays OnUpdate.
func (u *Upstream) awaitDelivery(ctx context.Context, n uint64) error {
	for {
		u.mu.Lock()
		if n == 0 || u.delivered >= n {
			u.mu.Unlock()
			return nil
		}
		if u.delivery == nil {
			u.delivery = make(chan struct{})
		}
		ch := u.delivery
		u.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// use records that srv, a server with u's identity, is in use: under u's
// name it updates u's behaviour fields; under another name it becomes an
// alias. u is never renamed here (see settleNames). Every call looks its
// upstream up this way, with the server it already follows: that changes
// nothing, and restarting the idle timer for it would make a timer per
// call.
func (u *Upstream) use(srv *registry.Server) {
	u.mu.Lock()
	defer u.unlock()
	switch {
	case srv == u.srv:
		return
	case srv.Name != u.srv.Name:
		if !slices.Contains(u.aliases, srv.Name) {
			u.aliases = append(slices.Clone(u.aliases), srv.Name)
			slices.Sort(u.aliases)
		}
		return
	}
	u.updateLocked(srv)
}

// settleNames applies a configuration's servers with u's identity (at
// least one): u keeps its name if one of them has it, else takes the first
// one's; the rest are its aliases. It returns the server u now follows.
func (u *Upstream) settleNames(group []*registry.Server) *registry.Server {
	u.mu.Lock()
	defer u.unlock()
	primary := group[0]
	for _, srv := range group {
		if srv.Name == u.srv.Name {
			primary = srv
			break
		}
	}
	var aliases []string
	for _, srv := range group {
		if srv.Name != primary.Name && !slices.Contains(aliases, srv.Name) {
			aliases = append(aliases, srv.Name)
		}
	}
	slices.Sort(aliases)
	u.aliases = aliases
	if old := u.srv.Name; old != primary.Name {
		u.m.forget(old)
		u.m.add(primary.Name, u.state)
		u.log = u.pool.log.With("server", primary.Name)
	}
	u.updateLocked(primary)
	return primary
}

// updateLocked applies a newer config with the same identity and name.
func (u *Upstream) updateLocked(srv *registry.Server) {
	lifecycleChanged := u.srv.Lifecycle != srv.Lifecycle
	if maxConcurrency(u.srv) != maxConcurrency(srv) {
		u.gate.setLimit(maxConcurrency(srv))
	}
	u.srv = srv
	u.stopIdleLocked() // the idle timeout may have changed
	u.armIdleLocked()
	if lifecycleChanged {
		select {
		case u.wake <- struct{}{}: // a keep-alive loop re-reads the lifecycle
		default:
		}
	}
}

// Stderr returns up to n of the last lines the upstream's most recent
// process wrote to stderr (running or not), oldest first; nil for HTTP
// upstreams and before the first start. At most 50 lines are kept.
func (u *Upstream) Stderr(n int) []string {
	u.mu.Lock()
	pr := u.lastProc
	u.mu.Unlock()
	if pr == nil {
		return nil
	}
	return pr.stderrLines(n)
}

// noteProcess records pr as the most recently started process.
func (u *Upstream) noteProcess(pr *process) {
	u.mu.Lock()
	u.lastProc = pr
	u.mu.Unlock()
}

// Status reports the upstream's current status.
func (u *Upstream) Status() Status {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.statusLocked()
}

func (u *Upstream) statusLocked() Status {
	st := Status{
		Name:       u.srv.Name,
		Aliases:    u.aliases,
		Hash:       u.hash,
		State:      u.state,
		Since:      u.since,
		LastError:  u.lastErr,
		Calls:      u.calls,
		Errors:     u.errs,
		ByName:     maps.Clone(u.byName),
		InFlight:   u.inFlight,
		Connects:   u.connects,
		IdleCloses: u.idleCloses,
	}
	if u.state == StateFailed && time.Now().Before(u.nextRetry) {
		st.NextRetry = u.nextRetry
	}
	if u.sess != nil {
		st.PID = u.sess.pid()
	}
	if u.snap != nil {
		st.Tools = len(u.snap.Tools)
	}
	return st
}

// Snapshot returns the last known lists (nil if never connected).
func (u *Upstream) Snapshot() *Snapshot {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.snap
}

// Reconnect drops the current connection, if any, and connects afresh:
// for a user who asks to connect (mcp({connect})), whatever state the old
// connection is in.
func (u *Upstream) Reconnect(ctx context.Context) (*Snapshot, error) {
	u.mu.Lock()
	s := u.sess
	u.mu.Unlock()
	if s != nil {
		u.dropSession(s, "reconnect requested")
	}
	return u.Connect(ctx)
}

func (u *Upstream) isRetired() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.retired
}

// acquire returns a live session, connecting if needed, and counts a call
// in flight (release ends it). It fails fast while backing off or when the
// upstream needs authentication.
func (u *Upstream) acquire(ctx context.Context) (*session, *registry.Server, error) {
	for {
		u.mu.Lock()
		if u.retired {
			u.mu.Unlock()
			return nil, nil, fmt.Errorf("upstream %q: %w", u.srv.Name, ErrClosed)
		}
		if s := u.sess; s != nil {
			if !s.ended() {
				u.inFlight++ // the idle timer, if pending, re-checks when it fires
				srv := u.srv
				u.mu.Unlock()
				return s, srv, nil
			}
			u.mu.Unlock()
			u.sessionLost(s, nil) // noticed before its watcher did
			continue
		}
		if u.authErr != nil {
			err, retry := u.authErr, u.authRetry
			u.mu.Unlock()
			if retry == nil || !retry() {
				return nil, nil, err
			}
			u.mu.Lock()
			if u.authErr == err {
				u.authErr = nil
			}
			u.mu.Unlock()
			continue
		}
		if now := time.Now(); now.Before(u.nextRetry) && u.attempt == nil {
			err := &BackoffError{Server: u.srv.Name, Failures: u.failures, NextRetry: u.nextRetry,
				Wait: u.nextRetry.Sub(now), LastError: u.lastErr}
			u.mu.Unlock()
			return nil, nil, err
		}
		att, err := u.startAttemptLocked()
		if err != nil {
			u.unlock()
			return nil, nil, err
		}
		u.waiting++
		u.unlock()
		select {
		case <-att.done:
			u.mu.Lock()
			u.waiting--
			u.mu.Unlock()
			if att.err != nil {
				return nil, nil, att.err
			}
		case <-ctx.Done():
			u.mu.Lock()
			u.waiting--
			u.armIdleLocked()
			u.mu.Unlock()
			return nil, nil, ctx.Err()
		}
	}
}

// release ends a call started by acquire.
func (u *Upstream) release() {
	u.mu.Lock()
	defer u.unlock()
	u.inFlight--
	u.lastUsed = time.Now()
	if u.inFlight == 0 {
		if u.drained != nil {
			close(u.drained)
			u.drained = nil
		}
		u.armIdleLocked()
	}
}

// Connect connects now, bypassing backoff and a needs-auth state, and
// returns the fresh snapshot once the pool's OnUpdate has had it; if
// already connected, it re-lists.
func (u *Upstream) Connect(ctx context.Context) (*Snapshot, error) {
	u.mu.Lock()
	if u.retired {
		u.mu.Unlock()
		return nil, fmt.Errorf("upstream %q: %w", u.srv.Name, ErrClosed)
	}
	if s := u.sess; s != nil && !s.ended() {
		timeout := requestTimeout(u.srv)
		u.mu.Unlock()
		return u.relist(ctx, s, timeout)
	}
	u.nextRetry = time.Time{}
	u.authErr = nil
	att, err := u.startAttemptLocked()
	u.unlock()
	if err != nil {
		return nil, err
	}
	select {
	case u.wake <- struct{}{}: // a keep-alive loop waiting on backoff re-evaluates
	default:
	}
	select {
	case <-att.done:
		if att.err != nil {
			return nil, att.err
		}
		if err := u.awaitDelivery(ctx, att.pub); err != nil {
			return nil, err
		}
		return att.snap, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// relist lists s's offerings now and publishes them.
func (u *Upstream) relist(ctx context.Context, s *session, timeout time.Duration) (*Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	snap, err := listAll(ctx, s.cs, u.logger())
	if err != nil {
		return nil, fmt.Errorf("re-listing upstream %q: %w", u.Status().Name, err)
	}
	u.mu.Lock()
	var pub uint64
	if u.sess == s {
		pub = u.publishLocked(snap)
	}
	u.unlock()
	if err := u.awaitDelivery(ctx, pub); err != nil {
		return nil, err
	}
	return snap, nil
}

// requestRelist re-lists after a list_changed notification from cs, on a
// pool goroutine; notifications arriving meanwhile coalesce into one more
// listing.
func (u *Upstream) requestRelist(cs *mcp.ClientSession) {
	u.mu.Lock()
	s := u.sess
	if s == nil || s.cs != cs {
		u.mu.Unlock()
		return
	}
	if u.relisting {
		u.relistAgain = true
		u.mu.Unlock()
		return
	}
	u.relisting = true
	u.mu.Unlock()
	if !u.pool.goTracked(func() { u.relistLoop(s) }) {
		u.mu.Lock()
		u.relisting = false
		u.mu.Unlock()
	}
}

func (u *Upstream) relistLoop(s *session) {
	for {
		u.mu.Lock()
		timeout := requestTimeout(u.srv)
		u.relistAgain = false
		u.mu.Unlock()
		if _, err := u.relist(u.pool.ctx, s, timeout); err != nil {
			u.logger().Warn("re-listing after list_changed", "error", err)
		}
		u.mu.Lock()
		if !u.relistAgain || u.sess != s {
			u.relisting = false
			u.mu.Unlock()
			return
		}
		u.mu.Unlock()
	}
}

func requestTimeout(srv *registry.Server) time.Duration {
	if srv.RequestTimeout > 0 {
		return srv.RequestTimeout
	}
	return DefaultRequestTimeout
}

func startupTimeout(srv *registry.Server) time.Duration {
	if srv.StartupTimeout > 0 {
		return srv.StartupTimeout
	}
	return DefaultStartupTimeout
}

func maxConcurrency(srv *registry.Server) int {
	if srv.MaxConcurrency > 0 {
		return srv.MaxConcurrency
	}
	return DefaultMaxConcurrency
}
