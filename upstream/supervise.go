package upstream

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/mcpgw/mcpgw/registry"
)

// Supervision timing; variables so tests can change them.
var (
	backoffBase = 2 * time.Second // delay after the first failed connect
	backoffMax  = 5 * time.Minute // cap
	// healthInterval is how often keep-alive upstreams are pinged.
	healthInterval = 30 * time.Second
	// healthTimeout bounds one health check.
	healthTimeout = 10 * time.Second
	// stableAfter is how long a keep-alive connection must last for its loss
	// to be reconnected at once; quicker losses back off like failed connects.
	stableAfter = 30 * time.Second
)

// backoff returns the delay after n consecutive failures: backoffBase
// doubling to backoffMax, less up to 20% jitter so upstreams that failed
// together do not retry together.
func backoff(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	d := backoffMax
	if n <= 30 {
		if b := backoffBase << (n - 1); b > 0 && b < backoffMax {
			d = b
		}
	}
	return d - time.Duration(rand.Float64()*0.2*float64(d))
}

// startAttemptLocked returns the connect in progress, starting one if needed.
func (u *Upstream) startAttemptLocked() (*attempt, error) {
	if u.attempt != nil {
		return u.attempt, nil
	}
	if u.retired {
		return nil, fmt.Errorf("upstream %q: %w", u.srv.Name, ErrClosed)
	}
	att := &attempt{done: make(chan struct{})}
	if !u.pool.goTracked(func() { u.runAttempt(att) }) {
		return nil, fmt.Errorf("upstream %q: %w", u.srv.Name, ErrClosed)
	}
	u.attempt = att
	u.setStateLocked(StateConnecting, "")
	return att, nil
}

// runAttempt connects, lists, and installs the session (or records the
// failure and the backoff), then wakes everyone waiting on att.
func (u *Upstream) runAttempt(att *attempt) {
	u.mu.Lock()
	srv := u.srv
	o := dialOptions{pinned: u.pinned, httpKind: u.httpKind}
	u.mu.Unlock()
	o.client = u.pool.newClient(u)

	timeout := startupTimeout(srv)
	ctx, cancel := context.WithTimeout(u.pool.ctx, timeout)
	start := time.Now()
	s, snap, err := u.establish(ctx, srv, o)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		te := &TimeoutError{Server: srv.Name, Op: "connect", After: timeout}
		var ae *AuthError
		if !errors.As(err, &ae) {
			te.Detail = err.Error()
			err = te
		}
	}
	cancel()

	var discard *session // to close outside the lock
	u.mu.Lock()
	u.attempt = nil
	if err == nil && (u.retired || !u.pool.addSession(s)) {
		discard, s, snap = s, nil, nil
		err = fmt.Errorf("upstream %q: %w", srv.Name, ErrClosed)
	}
	switch {
	case err == nil:
		att.pub = u.installLocked(s, snap, start)
	case u.retired:
		// Closed meanwhile; its state says so already.
	default:
		u.connectFailedLocked(err, srv, o)
	}
	att.sess, att.snap, att.err = s, snap, err
	close(att.done)
	u.unlock()

	if discard != nil {
		discard.close(true)
	}
	if s != nil && !u.pool.goTracked(func() { u.watch(s) }) {
		// The pool is closing and will force-close s (it is registered).
		close(s.done)
	}
	if s != nil {
		// A SetLogLevel between establish's and addSession found s in
		// neither place: it is brought to that level now.
		ctx, cancel := context.WithTimeout(u.pool.ctx, 5*time.Second)
		u.pool.syncLogLevel(ctx, s, u.logger())
		cancel()
	}
}

// installLocked makes s the upstream's session after a connect that
// succeeded, and publishes what it lists; it returns the publishing
// event's number (see awaitDelivery).
func (u *Upstream) installLocked(s *session, snap *Snapshot, start time.Time) uint64 {
	name := u.srv.Name
	s.connectedAt = time.Now()
	s.done = make(chan struct{})
	u.sess = s
	u.failures = 0
	u.nextRetry = time.Time{}
	// A server that negotiated an older protocol than the probe's
	// gets initialize straight away next time: one request, not two.
	u.pinned = s.pinned || snap.ProtocolVersion < sessionlessProtocol
	if s.kind != kindStdio {
		u.httpKind = s.kind
	}
	u.connects++
	if u.lost {
		u.lost = false
		u.m.restart(name)
	}
	u.lastUsed = time.Now()
	u.setStateLocked(StateConnected, "")
	pub := u.publishLocked(snap)
	u.armIdleLocked()
	u.m.connect(name, outcomeSuccess)
	u.log.Info("upstream connected", "transport", s.kind, "pid", s.pid(), "tools", len(snap.Tools), "resources", len(snap.Resources),
		"protocol", snap.ProtocolVersion, "took", time.Since(start).Round(time.Millisecond))
	return pub
}

// connectFailedLocked records a failed connect: needs-auth, or failed
// with its backoff (a stdio server that timed out is pinned next time).
func (u *Upstream) connectFailedLocked(err error, srv *registry.Server, o dialOptions) {
	name := u.srv.Name
	var ae *AuthError
	var te *TimeoutError
	switch {
	case errors.As(err, &ae):
		u.authErr = ae
		u.setStateLocked(StateNeedsAuth, ae.Reason)
		u.m.connect(name, outcomeNeedsAuth)
		u.log.Warn("upstream needs authentication", "reason", ae.Reason)
	default:
		outcome := outcomeFailure
		if errors.As(err, &te) {
			outcome = outcomeTimeout
			if !srv.IsRemote() && !o.pinned && !u.pinned {
				// An old server may ignore the server/discover probe
				// instead of answering it: try the next connect pinned.
				u.pinned = true
				u.log.Info("upstream connect timed out; the next connect pins the protocol version", "version", legacyProtocolVersion)
			}
		}
		u.failures++
		wait := backoff(u.failures)
		u.nextRetry = time.Now().Add(wait)
		u.setStateLocked(StateFailed, stateText(err))
		u.m.connect(name, outcome)
		u.log.Warn("upstream connect failed", "error", err, "failures", u.failures, "retry_in", wait.Round(time.Millisecond))
	}
}

// establish dials and lists. A stdio server that dies during an unpinned
// handshake is tried once more with the protocol version pinned: servers
// built on older SDKs may exit on the server/discover probe.
func (u *Upstream) establish(ctx context.Context, srv *registry.Server, o dialOptions) (*session, *Snapshot, error) {
	s, err := u.pool.dial(ctx, u, srv, o)
	if err != nil && !srv.IsRemote() && !o.pinned && ctx.Err() == nil && retryPinned(err) {
		u.logger().Info("upstream closed the connection during the handshake; retrying with the protocol version pinned",
			"version", legacyProtocolVersion, "error", err)
		o.pinned = true
		o.client = u.pool.newClient(u)
		s, err = u.pool.dial(ctx, u, srv, o)
	}
	if err != nil {
		return nil, nil, err
	}
	snap, err := listAll(ctx, s.cs, u.logger())
	if err != nil {
		if !u.pool.goTracked(func() { s.close(true) }) {
			s.close(true)
		}
		if s.http != nil {
			// The handshake went without credentials, or with some the
			// lists refuse (a server whose authorization server changed).
			if reason, ok := s.http.unauthorized(); ok {
				return nil, nil, &AuthError{Server: srv.Name, Reason: reason}
			}
		}
		return nil, nil, fmt.Errorf("listing upstream %q: %w", srv.Name, err)
	}
	u.pool.syncLogLevel(ctx, s, u.logger())
	u.resubscribe(ctx, s)
	return s, snap, nil
}

// watch waits for s to end and handles an unexpected end.
func (u *Upstream) watch(s *session) {
	_ = s.cs.Wait()
	close(s.done)
	u.pool.removeSession(s)
	if s.closing.Load() {
		return
	}
	var cause error
	if s.proc != nil {
		if exit := s.proc.exitError(u.pool.ctx, exitWait); exit != nil {
			cause = exit
		}
	}
	u.sessionLost(s, cause)
}

// sessionLost detaches s after it ended on its own (crash, kill, broken
// stream). The next call reconnects at once; a keep-alive loop is woken.
func (u *Upstream) sessionLost(s *session, cause error) {
	u.mu.Lock()
	if u.sess != s {
		u.mu.Unlock()
		return
	}
	u.sess = nil
	u.lost = true
	u.stopIdleLocked()
	msg := "connection lost"
	if cause != nil {
		msg = cause.Error()
	}
	u.setStateLocked(StateFailed, msg)
	u.log.Warn("upstream connection lost", "error", msg)
	u.unlock()
	select {
	case u.wake <- struct{}{}:
	default:
	}
	if !s.closing.Load() {
		// Release the transport (and reap the process) if not done already.
		if !u.pool.goTracked(func() { s.close(true) }) {
			s.close(true)
		}
	}
}

// dropSession detaches s and closes it, e.g. when the server forgot our
// HTTP session; the next call reconnects.
func (u *Upstream) dropSession(s *session, reason string) {
	u.mu.Lock()
	if u.sess == s {
		u.sess = nil
		u.stopIdleLocked()
		u.setStateLocked(StateIdle, reason)
	}
	u.unlock()
	u.nudge() // a keep-alive loop connects again
	s.closing.Store(true)
	if !u.pool.goTracked(func() { s.close(true) }) {
		s.close(true)
	}
}

// needsAuth records a 401 seen on s: no more connects until Connect.
func (u *Upstream) needsAuth(s *session, ae *AuthError) {
	u.mu.Lock()
	u.authErr = ae
	if u.sess == s {
		u.sess = nil
		u.stopIdleLocked()
	}
	u.setStateLocked(StateNeedsAuth, ae.Reason)
	u.log.Warn("upstream needs authentication", "reason", ae.Reason)
	u.unlock()
	s.closing.Store(true)
	if !u.pool.goTracked(func() { s.close(true) }) {
		s.close(true)
	}
}

// armIdleLocked starts the idle timer of a connected upstream with no call
// in flight or waiting for it and no subscription (see idleCloses), unless
// one is pending: a call does not stop the timer, and when it fires,
// idleExpired re-checks and starts it again for the time left since the
// last use. A busy upstream so makes no timer per call.
func (u *Upstream) armIdleLocked() {
	if u.idle != nil || u.sess == nil || u.inFlight > 0 || u.waiting > 0 || u.retired || len(u.subs) > 0 || !idleCloses(u.srv) {
		return
	}
	d := u.srv.IdleTimeout - time.Since(u.lastUsed)
	u.idle = time.AfterFunc(max(d, 0), u.idleExpired)
}

func (u *Upstream) stopIdleLocked() {
	if u.idle != nil {
		u.idle.Stop()
		u.idle = nil
	}
}

// idleCloses reports whether srv's connection closes after IdleTimeout
// without use: lazy and eager servers with a timeout (the registry leaves an
// eager server's at 0 unless configured), never keep-alive ones.
func idleCloses(srv *registry.Server) bool {
	return srv.Lifecycle != registry.LifecycleKeepAlive && srv.IdleTimeout > 0
}

// idleExpired closes the connection if it is still idle. It re-checks
// everything: a call may have started since the timer was set.
func (u *Upstream) idleExpired() {
	if !u.pool.enter() {
		return
	}
	defer u.pool.wg.Done()
	u.mu.Lock()
	u.idle = nil // fired: armIdleLocked may start another
	s := u.sess
	if s == nil || u.inFlight > 0 || u.waiting > 0 || u.retired || len(u.subs) > 0 || !idleCloses(u.srv) {
		u.mu.Unlock()
		return
	}
	if time.Since(u.lastUsed) < u.srv.IdleTimeout {
		u.armIdleLocked()
		u.mu.Unlock()
		return
	}
	u.sess = nil
	u.idleCloses++
	u.m.idleClose(u.srv.Name)
	u.setStateLocked(StateIdle, "")
	u.log.Info("closing idle upstream", "idle_timeout", u.srv.IdleTimeout)
	u.unlock()
	s.close(false)
}

// connectInBackground starts a connect unless connected, connecting,
// backing off or waiting for authentication (eager servers).
func (u *Upstream) connectInBackground() {
	u.mu.Lock()
	defer u.unlock()
	if u.sess != nil || u.attempt != nil || u.retired || u.authErr != nil || time.Now().Before(u.nextRetry) {
		return
	}
	_, _ = u.startAttemptLocked()
}

// nudge wakes the keep-alive loop, if one runs, to look at the upstream
// again.
func (u *Upstream) nudge() {
	select {
	case u.wake <- struct{}{}:
	default:
	}
}

// keptLocked reports whether the upstream stays connected without calls:
// a keep-alive server, or one whose resources callers are subscribed to
// (subscribe.go).
func (u *Upstream) keptLocked() bool {
	return u.srv.Lifecycle == registry.LifecycleKeepAlive || len(u.subs) > 0
}

// superviseKeepAlive starts the keep-alive loop unless it is running.
func (u *Upstream) superviseKeepAlive() {
	u.mu.Lock()
	if u.supervising || u.retired {
		u.mu.Unlock()
		return
	}
	u.supervising = true
	u.mu.Unlock()
	if !u.pool.goTracked(u.keepAlive) {
		u.mu.Lock()
		u.supervising = false
		u.mu.Unlock()
	}
}

// keepAlive keeps a keep-alive upstream, or one with subscriptions,
// connected: it connects (respecting backoff), pings every healthInterval,
// and reconnects when the connection is lost or a ping fails. It returns
// when the upstream is retired, is neither any more (see keptLocked), or
// the pool closes.
//
// It says it has stopped (supervising) under the lock under which it
// decides to: a Subscribe that makes the upstream kept a moment later
// starts another loop, instead of finding this one about to end.
func (u *Upstream) keepAlive() {
	closing := func() {
		u.mu.Lock()
		u.supervising = false
		u.mu.Unlock()
	}
	var (
		quickLosses int       // consecutive losses of short-lived connections
		holdUntil   time.Time // no reconnect before this, after quick losses
		watched     *session  // the session last seen, to notice its loss
	)
	for {
		u.mu.Lock()
		if u.retired || !u.keptLocked() {
			u.supervising = false
			u.mu.Unlock()
			return
		}
		s, att := u.sess, u.attempt
		if watched != nil && s != watched {
			if time.Since(watched.connectedAt) < stableAfter {
				quickLosses++
				holdUntil = time.Now().Add(backoff(quickLosses - 1))
			} else {
				quickLosses = 0
			}
			watched = nil
		}
		wait := healthInterval
		now := time.Now()
		switch {
		case s != nil:
			watched = s
		case att != nil || u.authErr != nil:
			// Wait for the attempt (or for Connect, after a 401).
		case now.Before(u.nextRetry):
			wait = u.nextRetry.Sub(now)
		case now.Before(holdUntil):
			wait = holdUntil.Sub(now)
		default:
			att, _ = u.startAttemptLocked()
		}
		u.unlock()

		if s == nil && att != nil {
			select {
			case <-att.done:
			case <-u.pool.ctx.Done():
				closing()
				return
			}
			continue
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
			if s != nil {
				u.healthCheck(s)
			}
		case <-u.wake:
		case <-u.pool.ctx.Done():
			t.Stop()
			closing()
			return
		}
		t.Stop()
	}
}

// healthCheck pings s (lists tools for protocol versions without ping) and
// drops it if that fails.
func (u *Upstream) healthCheck(s *session) {
	if s.ended() {
		u.sessionLost(s, nil)
		return
	}
	ctx, cancel := context.WithTimeout(u.pool.ctx, healthTimeout)
	defer cancel()
	if err := s.check(ctx); err != nil && u.pool.ctx.Err() == nil {
		u.logger().Warn("upstream health check failed; reconnecting", "error", err)
		u.sessionLost(s, fmt.Errorf("health check: %w", err))
	}
}

// retire closes the upstream after its in-flight calls finish (it was
// removed from the configuration). Later calls fail with ErrClosed.
func (u *Upstream) retire() {
	s, drained := u.markClosed()
	if s == nil {
		return
	}
	closeIt := func() {
		if drained != nil {
			select {
			case <-drained:
			case <-u.pool.ctx.Done():
			}
		}
		s.close(u.pool.ctx.Err() != nil)
	}
	// If the pool is closing, Close force-closes every session itself.
	u.pool.goTracked(closeIt)
}

// markClosed moves the upstream to closed and detaches its session; drained
// is non-nil while calls are in flight and closed when they have finished.
func (u *Upstream) markClosed() (s *session, drained chan struct{}) {
	u.mu.Lock()
	defer u.unlock()
	if u.retired {
		return nil, nil
	}
	u.retired = true
	u.stopIdleLocked()
	s, u.sess = u.sess, nil
	if s != nil {
		s.closing.Store(true)
		if u.inFlight > 0 {
			u.drained = make(chan struct{})
			drained = u.drained
		}
	}
	u.setStateLocked(StateClosed, "")
	u.m.forget(u.srv.Name)
	u.log.Info("upstream closed")
	select {
	case u.wake <- struct{}{}:
	default:
	}
	return s, drained
}
