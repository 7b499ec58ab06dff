package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"syscall"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// RecordReload notes the outcome of a reload attempt for status, metrics
// and mcp({}).
func (s *Server) RecordReload(err error) { s.recordReload(err, false) }

// RecordNoConfig notes a load that failed while no configuration has
// loaded since the daemon started: it serves no servers, and there is no
// last good configuration to speak of.
func (s *Server) RecordNoConfig(err error) { s.recordReload(err, true) }

func (s *Server) recordReload(err error, none bool) {
	info := &api.ReloadInfo{At: time.Now(), OK: err == nil, NoConfig: err != nil && none}
	if err != nil {
		info.Error = err.Error()
	}
	s.mu.Lock()
	s.lastReload = info
	s.mu.Unlock()
	s.metrics.reload(err)
}

// httpListener is the HTTP listener's address, or why there is none.
type httpListener struct{ addr, err string }

// SetHTTP says what the daemon's HTTP listener serves (addr), or why the
// address it was asked to serve (listen) is not served (err), for the
// status report: the CLI, which reaches the daemon through its socket
// too, tells the user why the page is not there.
func (s *Server) SetHTTP(addr, listen string, err error) {
	l := httpListener{addr: addr}
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		l.err = listen + " is taken by another program"
	case err != nil:
		l.err = fmt.Sprintf("%s: %v", listen, err)
	}
	s.mu.Lock()
	s.http = l
	s.mu.Unlock()
}

func (s *Server) httpListener() httpListener {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.http
}

func (s *Server) reloadInfo() *api.ReloadInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastReload
}

// Status reports the daemon's current state.
func (s *Server) Status() *api.Report {
	v := s.catalog.View()
	r := &api.Report{
		Version:    s.version,
		PID:        pid,
		StartedAt:  s.started,
		Config:     v.Config.Path,
		Sessions:   len(s.sessionList()),
		LastReload: s.reloadInfo(),
		HTTP:       s.httpListener().addr,
		HTTPError:  s.httpListener().err,
		Servers:    []api.ServerReport{},
		Warnings:   v.Config.Warnings,
		Approvals:  s.calls.Approvals(),
		Scripts:    s.scripts.snapshot(),
	}
	if s.opts.Cache != nil {
		r.Cache = s.opts.Cache.Path()
	}
	for _, sv := range v.Servers {
		sr := s.serverReport(sv)
		r.Tools += sr.Tools
		r.Servers = append(r.Servers, sr)
	}
	return r
}

func (s *Server) serverReport(sv *registry.ServerView) api.ServerReport {
	srv := sv.Server
	sr := api.ServerReport{
		Name:      srv.Name,
		Lifecycle: srv.Lifecycle,
		Transport: "stdio",
		Source:    srv.Source,
		Line:      srv.Line,
		P50Ms:     float64(s.latency.p50(srv.Name).Microseconds()) / 1000,
		Policy:    serverPolicy(srv, s.catalog.View().Config.Settings),
	}
	for _, t := range sv.Tools {
		// Counted as the server lists them, as the connect log counts:
		// a resource's reader is a resource, not a tool.
		if t.Resource != nil {
			sr.Resources++
		} else {
			sr.Tools++
		}
	}
	if srv.IsRemote() {
		sr.Transport = "http"
	}
	if srv.Auth == registry.AuthOAuth {
		sr.Login, sr.TokenExpiry = s.login(srv)
	}
	if sv.Listing != nil {
		sr.Listing = sv.Listing.Source
	}
	if srv.Untrusted {
		sr.State = "untrusted"
		return sr
	}
	if !srv.Enabled {
		sr.State = "disabled"
		sr.DisabledHere = s.disabledHere(srv.Name)
		return sr
	}
	st := s.pool.Upstream(srv).Status()
	sr.Calls, sr.Errors, sr.LastError = st.Calls, st.Errors, st.LastError
	if len(st.Aliases) > 0 {
		sr.Upstream = st.Name
		for _, n := range append([]string{st.Name}, st.Aliases...) {
			if n != srv.Name {
				sr.SharedWith = append(sr.SharedWith, n)
			}
		}
		// Each name's row counts the calls made by that name; the
		// process is shared, the calls are not.
		c := st.ByName[srv.Name]
		sr.Calls, sr.Errors = c.Calls, c.Errors
	}
	sr.Since, sr.NextRetry, sr.PID = st.Since, st.NextRetry, st.PID
	switch st.State {
	case upstream.StateConnected, upstream.StateConnecting, upstream.StateFailed, upstream.StateNeedsAuth:
		sr.State = string(st.State)
	default:
		switch {
		case sv.Listing != nil && sv.Listing.Source != registry.SourceLive:
			sr.State = "cached"
		case sv.Listing != nil:
			sr.State = "idle-closed" // connected before, closed for idleness or after a crash
		default:
			sr.State = "not connected"
		}
	}
	return sr
}

func (s *Server) serveStatus(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(s.statusFor(userOf(r.Context())))
}

// login describes srv's stored OAuth login, never its tokens.
func (s *Server) login(srv *registry.Server) (string, time.Time) {
	if s.opts.OAuthStore == nil {
		return "none", time.Time{}
	}
	c, err := s.opts.OAuthStore.Load(srv.URL)
	switch {
	case err != nil || c.Token == nil || c.Token.AccessToken == "":
		return "none", time.Time{}
	case !c.Token.Expiry.IsZero() && time.Now().After(c.Token.Expiry):
		if c.Token.RefreshToken == "" && c.Grant == "" {
			return "expired", c.Token.Expiry
		}
		return "logged in (refresh due)", c.Token.Expiry
	}
	return "logged in", c.Token.Expiry
}

// serverPolicy describes what restricts srv, for the status report: every
// line of registry.Server.Policy, the inherited ones included.
func serverPolicy(srv *registry.Server, st registry.Settings) []string {
	var out []string
	for _, l := range srv.Policy(st) {
		out = append(out, l.String())
	}
	return out
}
