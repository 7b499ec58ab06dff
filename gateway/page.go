package gateway

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/gateway/statuspage"
	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/gateway/transport"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/registry/search"
)

// pageDaemon is the daemon as its status page sees it (statuspage.Daemon).
type pageDaemon struct{ s *Server }

var _ statuspage.Daemon = pageDaemon{}

// PageData gathers what the page shows.
func (p pageDaemon) PageData(query string) *statuspage.Data {
	s := p.s
	rep := s.Status()
	d := &statuspage.Data{Report: rep}
	v := s.catalog.View()
	for _, sr := range rep.Servers {
		ps := statuspage.Server{ServerReport: sr, Daemon: s.serverLines(sr)}
		if sv, ok := v.Server(sr.Name); ok {
			if sv.Server.Enabled && !sv.Server.Untrusted {
				ps.Actionable = true
				ps.Stderr = s.pool.Upstream(sv.Server).Stderr(20)
			}
			for _, t := range sv.Tools {
				ps.ToolList = append(ps.ToolList, statuspage.Tool{Name: t.Name, Description: surface.FirstLine(t.Description()), Params: surface.ParamsLine(t)})
			}
		}
		d.Servers = append(d.Servers, ps)
	}
	users := map[string][]string{} // server → clients of the sessions that called it
	for _, ss := range s.sessionList() {
		ps := ss.pageSession()
		d.SessionList = append(d.SessionList, ps)
		ss.mu.Lock()
		for server := range ss.servers {
			users[server] = append(users[server], ps.Client)
		}
		ss.mu.Unlock()
	}
	for i := range d.Servers {
		d.Servers[i].Sessions = users[d.Servers[i].Name]
		slices.Sort(d.Servers[i].Sessions)
	}
	d.Pending = s.pendingProjects()
	if query != "" {
		d.Query = query
		ix := v.Index()
		if hits, err := ix.Search(query, search.Options{Limit: 10}); err == nil {
			for _, h := range hits {
				t := v.Tools[h.Doc]
				d.Results = append(d.Results, statuspage.Result{Tool: t.Name, Description: surface.Shorten(surface.FirstLine(t.Description()), 160), Score: h.Score, Why: ix.Explain(query, h.Doc).String()})
			}
		}
	}
	return d
}

// Reconnect connects a server now, as `mcpgw connect` does.
func (p pageDaemon) Reconnect(ctx context.Context, name string) error {
	v := p.s.catalog.View()
	if _, ok := v.Server(name); !ok {
		return statuspage.Errorf(http.StatusNotFound, "no server %q", name)
	}
	srv, err := dispatch.UsableServer(v, name)
	if err != nil {
		return statuspage.Errorf(http.StatusConflict, "%v", err)
	}
	_, err = p.s.pool.Upstream(srv).Reconnect(ctx)
	return err
}

func (p pageDaemon) SetEnabled(name string, on bool) error { return p.s.SetEnabled(name, on) }

// TrustProject trusts or refuses a project the page lists as pending.
func (p pageDaemon) TrustProject(dir string, trust bool) (string, error) {
	s := p.s
	if !slices.ContainsFunc(s.pendingProjects(), func(pp statuspage.Project) bool { return pp.Dir == dir }) {
		return "", statuspage.Errorf(http.StatusNotFound, "%q is not a project waiting for trust", dir)
	}
	if !trust {
		s.overrideMu.Lock()
		if s.refusedDirs == nil {
			s.refusedDirs = map[string]bool{}
		}
		s.refusedDirs[dir] = true
		s.overrideMu.Unlock()
		return "refused " + dir + " until the daemon stops; its servers do not start", nil
	}
	if s.opts.Trust == nil {
		return "", statuspage.Errorf(http.StatusConflict, "no trust store")
	}
	msg, err := s.opts.Trust().Trust(dir)
	if err != nil {
		return "", err
	}
	s.log.Info("project trusted from the status page", "dir", dir)
	s.RefreshProjects()
	return msg, nil
}

// Login starts or joins the page login of a server and returns where to
// send the browser.
func (p pageDaemon) Login(ctx context.Context, name string) (string, error) {
	s := p.s
	sv, ok := s.catalog.View().Server(name)
	if !ok || sv.Server.Auth != registry.AuthOAuth || !sv.Server.IsRemote() {
		return "", statuspage.Errorf(http.StatusNotFound, "no remote server %q with \"auth\": \"oauth\"", name)
	}
	if s.opts.OAuthStore == nil {
		return "", statuspage.Errorf(http.StatusConflict, "this daemon keeps no logins")
	}
	l := s.startLogin(sv.Server)
	select {
	case authURL := <-l.url:
		l.url <- authURL // for a second click
		return authURL, nil
	case <-l.done:
		if l.err != nil {
			return "", fmt.Errorf("login: %w", l.err)
		}
		return "", statuspage.Errorf(http.StatusConflict, "logged in already")
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// ServerLog is the daemon's lines about a server, then its stderr.
func (p pageDaemon) ServerLog(name string) ([]string, error) {
	s := p.s
	sv, ok := s.catalog.View().Server(name)
	if !ok {
		return nil, statuspage.Errorf(http.StatusNotFound, "no server %q", name)
	}
	lines := s.serverLogs.get(name)
	if sv.Server.Enabled && !sv.Server.Untrusted {
		if up := s.pool.Upstream(sv.Server).Status().Name; up != name {
			lines = mergeLines(s.serverLogs.get(up), lines)
		}
		for _, l := range s.pool.Upstream(sv.Server).Stderr(50) {
			lines = append(lines, "stderr: "+l)
		}
	}
	return lines, nil
}

func (p pageDaemon) Approvals() []api.PendingApproval { return p.s.Approvals() }

func (p pageDaemon) Decide(id, decision, by string) (api.PendingApproval, error) {
	pa, err := p.s.Decide(id, decision, by)
	switch {
	case err == ErrNoApproval:
		return pa, statuspage.Errorf(http.StatusNotFound, "%s: %v", id, err)
	case err != nil:
		return pa, statuspage.Errorf(http.StatusBadRequest, "%v", err)
	}
	return pa, nil
}

// pageSession describes a session for the page.
func (ss *session) pageSession() statuspage.Session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	p := statuspage.Session{Mode: string(ss.mode.Name()), Dir: ss.opts.Cwd, Activated: len(ss.activated), Transport: "stdio"}
	if t := ss.lastActive.Load(); t != 0 {
		p.LastActive = time.Unix(0, t)
	}
	switch {
	case ss.sessionless:
		// An HTTP conversation: its requests are of the sessionless
		// protocol, each its own (no client of its own either).
		p.Transport, p.Protocol = "http", transport.FirstSessionless
	case ss.ss != nil && ss.ss.ID() != "":
		p.Transport = "http"
	case ss.opts.ID != "":
		p.Transport = "socket"
	}
	if ss.ss != nil {
		if init := ss.ss.InitializeParams(); init != nil {
			p.Protocol = init.ProtocolVersion
			if init.ClientInfo != nil {
				p.Client = init.ClientInfo.Name + " " + init.ClientInfo.Version
			}
		}
	}
	return p
}
