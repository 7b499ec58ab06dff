package gateway

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/registry/search"
)

// The status page: http://127.0.0.1:7332/ on the daemon's listener, with
// the same protection as /-/status. Server-rendered, readable without
// JavaScript (which only refreshes it in place), no assets from elsewhere.

var (
	//go:embed ui/page.html
	pageHTML string
	//go:embed ui/style.css
	pageCSS  string
	pageTmpl = template.Must(template.New("page").Parse(pageHTML))
)

// pageData is what the page shows; GET / with Accept: application/json
// returns it as JSON.
type pageData struct {
	*api.Report
	Uptime      string        `json:"-"`
	Connected   int           `json:"connected"`
	CSS         template.CSS  `json:"-"`
	Servers     []pageServer  `json:"servers"`
	SessionList []pageSession `json:"sessionList"`
	// Pending are projects whose servers wait for the user's trust.
	Pending []pendingProject `json:"pending,omitempty"`
	Query   string           `json:"query,omitempty"`
	Results []pageResult     `json:"results,omitempty"`
	now     time.Time
}

// pageSession is one live downstream session.
type pageSession struct {
	Client     string    `json:"client"`    // name and version from initialize
	Transport  string    `json:"transport"` // http, socket (mcpgw stdio) or stdio
	LastActive time.Time `json:"lastActive,omitzero"`
	Mode       string    `json:"mode"`
	Dir        string    `json:"dir,omitempty"` // its project directory, when known
	Activated  int       `json:"activated"`     // tools ToolSearch activated
}

// pageResult is one search result of the playground, with why it ranked.
type pageResult struct {
	Tool        string  `json:"tool"`
	Description string  `json:"description"`
	Score       float64 `json:"score"`
	Why         string  `json:"why"`
}

// approvalChoice is one button of a pending approval.
type approvalChoice struct{ Value, Label string }

// ApprovalChoices are the page's buttons for a pending approval.
func (pageData) ApprovalChoices() []approvalChoice {
	return []approvalChoice{
		{grantOnce, "Allow once"},
		{grantTool, "Allow this tool for the session"},
		{grantServer, "Allow this server for the session"},
		{grantDeny, "Deny"},
	}
}

// Ago is how long ago t was, as the page writes it.
func (d pageData) Ago(t time.Time) string { return api.Ago(d.now, t) }

// pageServer is one server's row, log and tools.
type pageServer struct {
	api.ServerReport
	Class      string     `json:"-"`                  // ok, bad, wait or off: the state's colour
	Actionable bool       `json:"-"`                  // may be (re)connected from the page
	Sessions   []string   `json:"sessions,omitempty"` // the live sessions that called it (their clients)
	Stderr     []string   `json:"stderr,omitempty"`   // its last stderr lines
	Daemon     []string   `json:"log,omitempty"`      // the daemon's last lines about it
	ToolList   []pageTool `json:"toolList,omitempty"`
}

// pageTool is one tool as the page lists it.
type pageTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Params      string `json:"params"`
}

func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	rep := s.Status()
	now := time.Now()
	d := pageData{Report: rep, Uptime: api.Ago(now, rep.StartedAt), CSS: template.CSS(pageCSS), now: now}
	v := s.catalog.View()
	for _, sr := range rep.Servers {
		ps := pageServer{ServerReport: sr, Daemon: s.serverLogs.get(sr.Name)}
		switch sr.State {
		case "connected":
			ps.Class = "ok"
			d.Connected++
		case "failed", "needs-auth":
			ps.Class = "bad"
		case "connecting":
			ps.Class = "wait"
		default:
			ps.Class = "off"
		}
		if sv, ok := v.Server(sr.Name); ok {
			if sv.Server.Enabled && !sv.Server.Untrusted {
				ps.Actionable = true
				ps.Stderr = s.pool.Upstream(sv.Server).Stderr(20)
			}
			for _, t := range sv.Tools {
				ps.ToolList = append(ps.ToolList, pageTool{Name: t.Name, Description: firstLine(t.Description()), Params: paramsLine(t)})
			}
		}
		d.Servers = append(d.Servers, ps)
	}
	users := map[string][]string{} // server → clients of the sessions that called it
	for _, ss := range s.sessionList() {
		p := ss.pageSession()
		d.SessionList = append(d.SessionList, p)
		ss.mu.Lock()
		for server := range ss.servers {
			users[server] = append(users[server], p.Client)
		}
		ss.mu.Unlock()
	}
	for i := range d.Servers {
		d.Servers[i].Sessions = users[d.Servers[i].Name]
		slices.Sort(d.Servers[i].Sessions)
	}
	d.Pending = s.pendingProjects()
	if q := r.URL.Query().Get("q"); q != "" {
		d.Query = q
		ix := v.Index()
		hits, err := ix.Search(q, search.Options{Limit: 10})
		if err == nil {
			for _, h := range hits {
				t := v.Tools[h.Doc]
				d.Results = append(d.Results, pageResult{Tool: t.Name, Description: shorten(firstLine(t.Description()), 160), Score: h.Score, Why: ix.Explain(q, h.Doc).String()})
			}
		}
	}
	if strings.Contains(r.Header.Get("Accept"), "application/json") {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(d)
		return
	}
	var buf bytes.Buffer
	if err := pageTmpl.Execute(&buf, d); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; frame-ancestors 'none'")
	_, _ = w.Write(buf.Bytes())
}

// serveConnect is POST /-/connect?server=NAME (or a form field): connect
// or reconnect a server now, as `mcpgw connect` does. A browser's form post
// comes back to the page.
func (s *Server) serveConnect(w http.ResponseWriter, r *http.Request) {
	name := r.FormValue("server")
	v := s.catalog.View()
	sv, ok := v.Server(name)
	if !ok {
		http.Error(w, fmt.Sprintf("no server %q", name), http.StatusNotFound)
		return
	}
	srv, err := usableServer(v, sv.Server.Name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	_, err = s.pool.Upstream(srv).Reconnect(r.Context())
	if isForm(r) {
		http.Redirect(w, r, "/#server-"+name, http.StatusSeeOther)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprintln(w, err)
		return
	}
	fmt.Fprintf(w, "connected %s\n", name)
}

// serveEnable is POST /-/enable and /-/disable ?server=NAME (or a form
// field): the server on or off until the daemon stops (SetEnabled).
func (s *Server) serveEnable(on bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.FormValue("server")
		if err := s.SetEnabled(name, on); err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		if isForm(r) {
			http.Redirect(w, r, "/#server-"+name, http.StatusSeeOther)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		state := "enabled"
		if !on {
			state = "disabled"
		}
		fmt.Fprintf(w, "%s %s until the daemon stops\n", state, name)
	}
}

// serveLogs is GET /-/logs?server=NAME: the server's last stderr lines and
// the daemon's lines about it, as text (`mcpgw logs`).
func (s *Server) serveLogs(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("server")
	v := s.catalog.View()
	sv, ok := v.Server(name)
	if !ok {
		http.Error(w, fmt.Sprintf("no server %q", name), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	for _, l := range s.serverLogs.get(name) {
		fmt.Fprintln(w, l)
	}
	if sv.Server.Enabled && !sv.Server.Untrusted {
		for _, l := range s.pool.Upstream(sv.Server).Stderr(50) {
			fmt.Fprintln(w, "stderr: "+l)
		}
	}
}

func isForm(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	return ct == "application/x-www-form-urlencoded" || r.Header.Get("Sec-Fetch-Mode") == "navigate"
}

// pageSession describes a session for the page.
func (ss *session) pageSession() pageSession {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	p := pageSession{Mode: string(ss.mode), Dir: ss.opts.Cwd, Activated: len(ss.activated), Transport: "stdio"}
	if t := ss.lastActive.Load(); t != 0 {
		p.LastActive = time.Unix(0, t)
	}
	switch {
	case ss.ss != nil && ss.ss.ID() != "":
		p.Transport = "http"
	case ss.opts.ID != "":
		p.Transport = "socket"
	}
	if ss.ss != nil {
		if init := ss.ss.InitializeParams(); init != nil && init.ClientInfo != nil {
			p.Client = init.ClientInfo.Name + " " + init.ClientInfo.Version
		}
	}
	return p
}

// paramsLine lists a tool's parameters on one line: "owner*, repo*, page".
func paramsLine(t *registry.Tool) string {
	m := registry.SchemaMap(t.Def.InputSchema)
	props, _ := m["properties"].(map[string]any)
	req := map[string]bool{}
	if list, ok := m["required"].([]any); ok {
		for _, r := range list {
			if s, ok := r.(string); ok {
				req[s] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		if req[n] {
			n += "*"
		}
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
