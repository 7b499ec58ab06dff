package gateway

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/gateway/identity"
	"github.com/mcpgw/mcpgw/gateway/statuspage"
	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/gateway/transport"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/registry/search"
	"github.com/mcpgw/mcpgw/upstream"
)

// pageHub is the hub as the status page sees it (statuspage.Hub): it
// gives facts, copied out of the catalogue, the pool and the sessions, and
// carries out the page's actions; the page shapes and words them.
type pageHub struct{ s *Hub }

var _ statuspage.Hub = pageHub{}

// Status reports the daemon's current state.
func (s *Hub) Status() *api.Report { return statuspage.Report(context.Background(), pageHub{s}) }

func (s *Hub) serveStatus(w http.ResponseWriter, r *http.Request) {
	statuspage.ServeStatus(pageHub{s})(w, r)
}

// serverState is the state shown in status and lists.
func (s *Hub) serverState(sv *registry.ServerView) string {
	return surface.ServerState(sv, statuspage.ServerReport(pageHub{s}.serverFacts(context.Background(), sv), time.Now()))
}

func (p pageHub) Daemon(ctx context.Context) statuspage.DaemonFacts {
	s := p.s
	user := userOf(ctx)
	v := s.catalog.View()
	l := s.httpListener()
	d := statuspage.DaemonFacts{
		Version:    s.version,
		PID:        pid,
		StartedAt:  s.started,
		Config:     v.Config.Path,
		HTTP:       l.addr,
		HTTPError:  l.err,
		LastReload: s.reloadInfo(),
		Warnings:   v.Config.Warnings,
		Sessions:   len(s.sessionList()),
		// In team mode, the user's own scripts only.
		Scripts: slices.DeleteFunc(s.scripts.snapshot(), func(sr api.ScriptReport) bool { return sr.User != user }),
	}
	if s.opts.Cache != nil {
		d.Cache = s.opts.Cache.Path()
	}
	return d
}

func (p pageHub) Servers(ctx context.Context) []statuspage.ServerFacts {
	v := p.s.viewOf(ctx)
	out := make([]statuspage.ServerFacts, 0, len(v.Servers))
	for _, sv := range v.Servers {
		out = append(out, p.serverFacts(ctx, sv))
	}
	return out
}

// viewOf is the catalogue as the user ctx carries sees it in team mode
// (registry.Config.ForUser: the servers they may not see are not in it);
// the daemon's outside team mode.
func (s *Hub) viewOf(ctx context.Context) *registry.View {
	v := s.catalog.View()
	u := identity.FromContext(ctx)
	if u == nil {
		return v
	}
	return s.catalog.ViewFor(forUser(v.Config, u))
}

// policyOf describes the policy of the server name as configured, not as
// one user's view has it (with their approvals added).
func (s *Hub) policyOf(name string) []registry.PolicyItem {
	cfg := s.catalog.View().Config
	srv := cfg.Servers[name]
	if srv == nil {
		return nil
	}
	return registry.DescribePolicy(srv, cfg)
}

// serverFacts are sv's facts: its definition, policy, listing, stored
// login and, while it is on, its upstream's state (and, for a server with
// an upstream per user, theirs, the user's of ctx among them).
func (p pageHub) serverFacts(ctx context.Context, sv *registry.ServerView) statuspage.ServerFacts {
	s := p.s
	srv := sv.Server
	f := statuspage.ServerFacts{
		Name:         srv.Name,
		Source:       srv.Source,
		Line:         srv.Line,
		Lifecycle:    srv.Lifecycle,
		Remote:       srv.IsRemote(),
		OAuth:        srv.Auth == registry.AuthOAuth,
		Enabled:      srv.Enabled,
		Untrusted:    srv.Untrusted,
		DisabledHere: s.disabledHere(srv.Name),
		Policy:       s.policyOf(srv.Name),
		P50:          s.latency.p50(srv.Name),
	}
	for _, t := range sv.Tools {
		// Counted as the server lists them, as the connect log counts:
		// a resource's reader is a resource, not a tool.
		if t.Resource != nil {
			f.Resources++
		} else {
			f.Tools++
		}
	}
	if sv.Listing != nil {
		f.Listing = sv.Listing.Source
	}
	if f.OAuth {
		f.Login = s.login(ctx, srv)
	}
	if srv.Enabled && !srv.Untrusted {
		st := s.pool.Upstream(srv).Status()
		f.Upstream = &statuspage.UpstreamFacts{
			Name: st.Name, Aliases: st.Aliases, State: string(st.State), Since: st.Since, NextRetry: st.NextRetry,
			LastError: st.LastError, PID: st.PID, Calls: st.Calls, Errors: st.Errors,
			ByName: make(map[string]statuspage.Counts, len(st.ByName)),
		}
		for name, c := range st.ByName {
			f.Upstream.ByName[name] = statuspage.Counts{Calls: c.Calls, Errors: c.Errors}
		}
		if srv.Isolation == registry.IsolationUser && s.base.Load().Team != nil {
			f.PerUser = true
			mine := userUpstreamKey(userOf(ctx))
			for key, st := range s.pool.PrivateStatus(srv) {
				if !strings.HasPrefix(key, userUpstreamKey("")) {
					continue
				}
				if st.State == upstream.StateConnected {
					f.UserUpstreams++
				}
				if key == mine {
					f.Yours = &statuspage.UpstreamFacts{Name: st.Name, State: string(st.State), Since: st.Since, LastError: st.LastError, PID: st.PID, Calls: st.Calls, Errors: st.Errors}
				}
			}
		}
	}
	return f
}

// login describes srv's stored OAuth login, never its tokens: the login
// of the user ctx carries, for a server reached with each user's own.
func (s *Hub) login(ctx context.Context, srv *registry.Server) statuspage.LoginFacts {
	store := s.opts.OAuthStore
	if s.usersOwnLogin(srv) {
		store = s.userLoginStore(srv, userUpstreamKey(userOf(ctx)))
	}
	if store == nil {
		return statuspage.LoginFacts{}
	}
	c, err := store.Load(srv.URL)
	if err != nil || c.Token == nil || c.Token.AccessToken == "" {
		return statuspage.LoginFacts{}
	}
	return statuspage.LoginFacts{Token: true, Expiry: c.Token.Expiry, Refreshable: c.Token.RefreshToken != "" || c.Grant != ""}
}

func (p pageHub) Tools(ctx context.Context, server string) []statuspage.ToolFacts {
	sv, ok := p.s.viewOf(ctx).Server(server)
	if !ok {
		return nil
	}
	out := make([]statuspage.ToolFacts, 0, len(sv.Tools))
	for _, t := range sv.Tools {
		out = append(out, statuspage.ToolFacts{Name: t.Name, Description: t.Description(), Params: surface.ParamsLine(t)})
	}
	return out
}

func (p pageHub) Log(name string) []string { return p.s.serverLogs.get(name) }

func (p pageHub) Stderr(ctx context.Context, server string, n int) []string {
	sv, ok := p.s.viewOf(ctx).Server(server)
	if !ok || !sv.Server.Enabled || sv.Server.Untrusted {
		return nil
	}
	if user := userOf(ctx); user != "" && sv.Server.Isolation == registry.IsolationUser {
		// The user's own process, whose stderr may hold what they sent it.
		if u := p.s.pool.Private(sv.Server, userUpstreamKey(user)); u != nil {
			return u.Stderr(n)
		}
	}
	return p.s.pool.Upstream(sv.Server).Stderr(n)
}

func (p pageHub) Sessions(ctx context.Context) []statuspage.SessionFacts {
	user := userOf(ctx)
	var out []statuspage.SessionFacts
	for _, ss := range p.s.sessionList() {
		if ss.User() != user {
			continue // another user's, in team mode
		}
		out = append(out, p.sessionFacts(ss))
	}
	return out
}

// sessionFacts are ss's facts, its project's untrusted servers included.
func (p pageHub) sessionFacts(ss *session) statuspage.SessionFacts {
	f := statuspage.SessionFacts{Mode: string(ss.mode.Name()), Shim: ss.opts.ID != "", Dir: ss.opts.Cwd, User: ss.User()}
	if t := ss.lastActive.Load(); t != 0 {
		f.LastActive = time.Unix(0, t)
	}
	if sess := ss.conn.session(); sess != nil {
		f.HTTP = sess.ID() != ""
		if init := sess.InitializeParams(); init != nil {
			f.Protocol = init.ProtocolVersion
			if init.ClientInfo != nil {
				f.ClientName, f.ClientVersion = init.ClientInfo.Name, init.ClientInfo.Version
			}
		}
	}
	if ss.sessionless {
		// An HTTP conversation: its requests are of the sessionless
		// protocol, each its own (no client of its own either).
		f.HTTP, f.Protocol = true, transport.FirstSessionless
	}
	ss.mu.Lock()
	f.Activated = len(ss.activated)
	f.Servers = slices.Sorted(maps.Keys(ss.servers))
	ss.mu.Unlock()
	f.Project = p.s.projectFacts(ss)
	return f
}

// projectFacts are the servers of ss's project that wait for trust, with
// the commands they would run (secrets masked); nil when there are none.
func (s *Hub) projectFacts(ss *session) *statuspage.ProjectFacts {
	ov := ss.overlay.Load()
	if ov == nil || ss.opts.Cwd == "" {
		return nil
	}
	dir, err := filepath.Abs(ss.opts.Cwd)
	if err != nil {
		return nil
	}
	pf := &statuspage.ProjectFacts{Dir: dir, Refused: s.refused(dir)}
	for name, srv := range ov.Servers {
		if !srv.Untrusted {
			continue
		}
		run := srv.MaskedCommand()
		if srv.IsRemote() {
			run = registry.MaskURL(srv.URL)
		}
		pf.Servers = append(pf.Servers, statuspage.ProjectServer{Name: name, Run: run})
	}
	if len(pf.Servers) == 0 {
		return nil
	}
	return pf
}

func (p pageHub) Search(ctx context.Context, query string, limit int) []statuspage.Hit {
	v := p.s.viewOf(ctx)
	ix := v.Index()
	hits, err := ix.Search(query, search.Options{Limit: limit})
	if err != nil {
		return nil
	}
	out := make([]statuspage.Hit, 0, len(hits))
	for _, h := range hits {
		t := v.Tools[h.Doc]
		out = append(out, statuspage.Hit{Tool: t.Name, Description: t.Description(), Score: h.Score, Why: ix.Explain(query, h.Doc).String()})
	}
	return out
}

func (p pageHub) Approvals(ctx context.Context) []api.PendingApproval {
	return p.s.calls.ApprovalsOf(userOf(ctx))
}

// Reconnect connects a server now, as `mcpgw connect` does.
func (p pageHub) Reconnect(ctx context.Context, name string) error {
	v := p.s.viewOf(ctx)
	if _, ok := v.Server(name); !ok {
		return statuspage.Errorf(http.StatusNotFound, "no server %q", name)
	}
	srv, err := dispatch.UsableServer(v, name)
	if err != nil {
		return statuspage.Errorf(http.StatusConflict, "%v", err)
	}
	up, err := p.s.connectable(ctx, srv)
	if err != nil {
		return statuspage.Errorf(http.StatusConflict, "%v", err)
	}
	_, err = up.Reconnect(ctx)
	return err
}

func (p pageHub) SetEnabled(ctx context.Context, name string, on bool) error {
	if _, ok := p.s.viewOf(ctx).Server(name); !ok {
		return statuspage.Errorf(http.StatusNotFound, "no server %q", name)
	}
	if err := p.s.SetEnabled(name, on); err != nil {
		return statuspage.Errorf(http.StatusNotFound, "%v", err)
	}
	return nil
}

// Trust trusts a project directory, as `mcpgw trust` does.
func (p pageHub) Trust(dir string) (string, error) {
	s := p.s
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

// Refuse hides a project waiting for trust until the daemon stops.
func (p pageHub) Refuse(dir string) {
	s := p.s
	s.overrideMu.Lock()
	if s.refusedDirs == nil {
		s.refusedDirs = map[string]bool{}
	}
	s.refusedDirs[dir] = true
	s.overrideMu.Unlock()
}

// Login starts or joins the page login of a server and returns where to
// send the browser.
func (p pageHub) Login(ctx context.Context, name string) (string, error) {
	s := p.s
	sv, ok := s.viewOf(ctx).Server(name)
	if !ok || sv.Server.Auth != registry.AuthOAuth || !sv.Server.IsRemote() {
		return "", statuspage.Errorf(http.StatusNotFound, "no remote server %q with \"auth\": \"oauth\"", name)
	}
	if s.usersOwnLogin(sv.Server) {
		return "", statuspage.Errorf(http.StatusConflict, "each user logs in to %s with their own login, from their own machine: mcpgw login %s, with their token in $MCPGW_TOKEN", name, name)
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

func (p pageHub) Decide(ctx context.Context, id, decision, by string) (api.PendingApproval, error) {
	pa, err := p.s.calls.DecideAs(userOf(ctx), id, decision, by)
	switch {
	case err == ErrNoApproval:
		return pa, statuspage.Errorf(http.StatusNotFound, "%s: %v", id, err)
	case err != nil:
		return pa, statuspage.Errorf(http.StatusBadRequest, "%v", err)
	}
	return pa, nil
}

// refused reports whether dir was refused from the page (Refuse).
func (s *Hub) refused(dir string) bool {
	s.overrideMu.Lock()
	defer s.overrideMu.Unlock()
	return s.refusedDirs[dir]
}
