package gateway

import (
	"context"
	"time"

	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/registry"
)

// discoveryConcurrency bounds how many servers are being discovered at once:
// enough that ten npx servers start together, few enough that a config of
// fifty does not fork fifty Node processes at the same moment.
const discoveryConcurrency = 8

// A discovery is the first connection to a server whose tools nothing
// knows yet (no cache entry for its identity), made so that answers about
// tools can include it. done is closed when the connection has succeeded
// (its listing is in the catalogue) or failed.
type discovery struct {
	name    string
	started time.Time
	done    chan struct{}
}

// discover starts, in the background, a discovery of every enabled,
// trusted server in v whose listing is not known (none, or its previous
// configuration's) and is not being discovered already; at most discoveryConcurrency run at once. It does nothing when
// Options.NoBootstrap is set.
func (s *Hub) discover(v *registry.View) {
	if s.opts.NoBootstrap {
		return
	}
	for _, sv := range v.Servers {
		srv := sv.Server
		if !srv.Enabled || srv.Untrusted || sv.Known() || s.perUserCredentials(srv) {
			// A server reached with each user's own credentials is
			// discovered by the first user who needs its tools.
			continue
		}
		s.mu.Lock()
		if s.closed || s.discoveries[srv.Hash] != nil {
			s.mu.Unlock()
			continue
		}
		d := &discovery{name: srv.Name, started: time.Now(), done: make(chan struct{})}
		s.discoveries[srv.Hash] = d
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.discoveries, srv.Hash)
				s.mu.Unlock()
				close(d.done)
			}()
			select {
			case s.discoverSem <- struct{}{}:
			case <-s.ctx.Done():
				return
			}
			defer func() { <-s.discoverSem }()
			if err := s.connectNow(s.ctx, srv); err != nil {
				s.log.Warn("discovering tools", "server", srv.Name, "err", err)
			}
		}()
	}
}

// pendingFor returns the discoveries in progress for servers of v that
// have no listing yet.
func (s *Hub) pendingFor(v *registry.View) []*discovery {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*discovery
	for _, sv := range v.Servers {
		if sv.Listing != nil {
			continue
		}
		if d := s.discoveries[sv.Server.Hash]; d != nil {
			out = append(out, d)
		}
	}
	return out
}

// awaitDiscovery waits until no server of cfg's view is being discovered,
// at most settings.discoveryTimeoutMs or until ctx ends, and returns the
// view as it then is. It returns at once when nothing is pending, so a
// warm catalogue costs nothing.
func (s *Hub) awaitDiscovery(ctx context.Context, cfg *registry.Config) *registry.View {
	v := s.catalog.ViewFor(cfg)
	pending := s.pendingFor(v)
	if len(pending) == 0 {
		return v
	}
	limit := v.Config.Settings.DiscoveryTimeout
	if limit <= 0 {
		return v
	}
	timer := time.NewTimer(limit)
	defer timer.Stop()
	start := time.Now()
	for _, d := range pending {
		select {
		case <-d.done:
		case <-timer.C:
			s.metrics.discoveryWait(time.Since(start), false)
			return s.catalog.ViewFor(cfg)
		case <-ctx.Done():
			return s.catalog.ViewFor(cfg)
		}
	}
	s.metrics.discoveryWait(time.Since(start), true)
	return s.catalog.ViewFor(cfg)
}

// discoveryNote says which servers of v have no known tools and why: still
// starting, failed (with the upstream's reason) or waiting for a login.
// "" when every enabled server's tools are known. Answers about tools end
// with it, so that the model knows the answer may be incomplete.
func (s *Hub) discoveryNote(v *registry.View) string {
	var starting []surface.ServerWait
	var failed []surface.ServerFailure
	for _, sv := range v.Servers {
		srv := sv.Server
		if !srv.Enabled || srv.Untrusted || sv.Listing != nil {
			continue
		}
		s.mu.Lock()
		d := s.discoveries[srv.Hash]
		s.mu.Unlock()
		if d != nil {
			starting = append(starting, surface.ServerWait{Server: srv.Name, For: time.Since(d.started)})
			continue
		}
		up := s.pool.Upstream(srv)
		if st := up.Status(); st.LastError != "" {
			var stderr string
			if lines := up.Stderr(1); len(lines) > 0 {
				stderr = lines[0]
			}
			failed = append(failed, surface.ServerFailure{Server: srv.Name, Reason: surface.FailureReason(st.LastError, stderr)})
		}
	}
	return surface.DiscoveryNote(starting, failed)
}
