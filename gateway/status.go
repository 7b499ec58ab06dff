package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// Report is the daemon's state as `mcpgw status` shows it (GET /-/status).
type Report struct {
	Version    string         `json:"version"`
	PID        int            `json:"pid"`
	StartedAt  time.Time      `json:"startedAt"`
	Config     string         `json:"config"`
	Cache      string         `json:"cache,omitempty"`
	Sessions   int            `json:"sessions"`
	Tools      int            `json:"tools"`
	LastReload *ReloadInfo    `json:"lastReload,omitempty"`
	Servers    []ServerReport `json:"servers"`
	// Warnings are the config's: misspelt and ignored fields, unset
	// variables, fields mcpgw does not act on.
	Warnings []string `json:"warnings,omitempty"`
	// Approvals are the calls waiting for the user's decision.
	Approvals []PendingApproval `json:"approvals,omitempty"`
}

// ReloadInfo is the outcome of the last configuration reload.
type ReloadInfo struct {
	At    time.Time `json:"at"`
	OK    bool      `json:"ok"`
	Error string    `json:"error,omitempty"`
}

// ServerReport is one configured server in a Report.
type ServerReport struct {
	Name      string    `json:"name"`
	State     string    `json:"state"` // connected, idle-closed, cached, not connected, connecting, failed, needs-auth, disabled, untrusted
	Tools     int       `json:"tools"`
	Calls     int64     `json:"calls"`
	Errors    int64     `json:"errors"`
	LastError string    `json:"lastError,omitempty"`
	Since     time.Time `json:"since,omitzero"`
	NextRetry time.Time `json:"nextRetry,omitzero"`
	PID       int       `json:"pid,omitempty"`
	Lifecycle string    `json:"lifecycle"`
	Transport string    `json:"transport"` // stdio or http
	Source    string    `json:"source"`    // the file that defines it
	Listing   string    `json:"listing,omitempty"`
	// SharedWith names the other configured servers with the same identity:
	// they run as one upstream, whose metric series carry the first name
	// of Upstream (the one it was created under).
	SharedWith []string `json:"sharedWith,omitempty"`
	// Upstream is the name the shared upstream's logs and metrics use.
	Upstream string `json:"upstream,omitempty"`
	// Login is an OAuth server's login: "none", "logged in", "expired"
	// (a refresh is due), with TokenExpiry when the token has one.
	Login       string    `json:"login,omitempty"`
	TokenExpiry time.Time `json:"tokenExpiry,omitzero"`
	// P50Ms is the median duration of its last 256 calls, in ms.
	P50Ms float64 `json:"p50Ms,omitempty"`
	// Line is the line of its entry in Source.
	Line int `json:"line,omitempty"`
	// DisabledHere: disabled from the status page until the daemon stops.
	DisabledHere bool `json:"disabledHere,omitempty"`
	// Policy says what restricts the server's tools and what environment
	// it gets, a phrase each.
	Policy []string `json:"policy,omitempty"`
}

// RecordReload notes the outcome of a reload attempt for status, metrics
// and mcp({}).
func (s *Server) RecordReload(err error) {
	info := &ReloadInfo{At: time.Now(), OK: err == nil}
	if err != nil {
		info.Error = err.Error()
	}
	s.mu.Lock()
	s.lastReload = info
	s.mu.Unlock()
	s.metrics.reload(err)
}

func (s *Server) reloadInfo() *ReloadInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastReload
}

// Status reports the daemon's current state.
func (s *Server) Status() *Report {
	v := s.catalog.View()
	r := &Report{
		Version:    s.version,
		PID:        pid,
		StartedAt:  s.started,
		Config:     v.Config.Path,
		Sessions:   len(s.sessionList()),
		Tools:      len(v.Tools),
		LastReload: s.reloadInfo(),
		Servers:    []ServerReport{},
		Warnings:   v.Config.Warnings,
		Approvals:  s.approvals.list(),
	}
	if s.opts.Cache != nil {
		r.Cache = s.opts.Cache.Path()
	}
	for _, sv := range v.Servers {
		r.Servers = append(r.Servers, s.serverReport(sv))
	}
	return r
}

func (s *Server) serverReport(sv *registry.ServerView) ServerReport {
	srv := sv.Server
	sr := ServerReport{
		Name:      srv.Name,
		Tools:     len(sv.Tools),
		Lifecycle: srv.Lifecycle,
		Transport: "stdio",
		Source:    srv.Source,
		Line:      srv.Line,
		P50Ms:     float64(s.latency.p50(srv.Name).Microseconds()) / 1000,
		Policy:    serverPolicy(srv, s.catalog.View().Config.Settings),
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
	if len(st.Aliases) > 0 {
		sr.Upstream = st.Name
		for _, n := range append([]string{st.Name}, st.Aliases...) {
			if n != srv.Name {
				sr.SharedWith = append(sr.SharedWith, n)
			}
		}
	}
	sr.Calls, sr.Errors, sr.LastError = st.Calls, st.Errors, st.LastError
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
	_ = enc.Encode(s.Status())
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

// serverPolicy describes what restricts srv's tools and its environment,
// for the status report.
func serverPolicy(srv *registry.Server, st registry.Settings) []string {
	var out []string
	switch {
	case srv.ApproveTools.Set:
		out = append(out, "approveTools "+srv.ApproveTools.String())
	case st.ApproveTools.Set:
		out = append(out, "approveTools "+st.ApproveTools.String()+" (settings)")
	}
	if len(srv.AutoApprove) > 0 {
		out = append(out, "never asked: "+strings.Join(srv.AutoApprove, ", "))
	}
	if len(srv.ExcludeTools) > 0 {
		out = append(out, "excluded: "+strings.Join(srv.ExcludeTools, ", "))
	}
	if srv.Command != "" {
		if srv.InheritsEnv() {
			out = append(out, "environment: mcpgw's, less MCPGW_*")
		} else {
			out = append(out, "environment: "+strings.Join(registry.DefaultInheritedEnv, " ")+" and its env only")
		}
	}
	return out
}
