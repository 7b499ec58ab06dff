// Package statuspage is the daemon's status page and its actions:
// http://127.0.0.1:7332/ on the daemon's listener, with the same
// protection as the control API. Server-rendered, readable without
// JavaScript (which only refreshes it in place), no assets from elsewhere.
//
// The page reads facts of the daemon and asks it for actions through Hub;
// it knows nothing of sessions, upstreams or the catalogue but the plain
// facts the hub gives. What the page and `mcpgw status` show is shaped,
// sorted and worded here (report.go, page.go), so that a new part of the
// page touches this package and the fact it needs.
package statuspage

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/gateway/surface"
)

var (
	//go:embed ui/page.html
	pageHTML string
	//go:embed ui/style.css
	pageCSS string
	// pageTmpl is parsed when the page is first shown, not when the
	// daemon starts: most daemons are never looked at.
	pageTmpl = sync.OnceValue(func() *template.Template {
		return template.Must(template.New("page").Parse(pageHTML))
	})
)

// Data is what the page shows; GET / with Accept: application/json
// returns it as JSON.
type Data struct {
	*api.Report
	Connected   int       `json:"connected"`
	Servers     []Server  `json:"servers"`
	SessionList []Session `json:"sessionList"`
	// Pending are projects whose servers wait for the user's trust.
	Pending []Project `json:"pending,omitempty"`
	Query   string    `json:"query,omitempty"`
	Results []Result  `json:"results,omitempty"`
}

// Server is one server's row, log and tools.
type Server struct {
	api.ServerReport
	Class      string   `json:"-"`                  // ok, bad, wait or off: the state's colour
	Actionable bool     `json:"-"`                  // may be (re)connected from the page
	Sessions   []string `json:"sessions,omitempty"` // the live sessions that called it (their clients)
	Stderr     []string `json:"stderr,omitempty"`   // its last stderr lines
	Log        []string `json:"log,omitempty"`      // the daemon's last lines about it
	ToolList   []Tool   `json:"toolList,omitempty"`
}

// Tool is one tool as the page lists it.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Params      string `json:"params"`
}

// Session is one live downstream session.
type Session struct {
	Client    string `json:"client"`         // name and version from initialize
	User      string `json:"user,omitempty"` // who opened it, in team mode
	Transport string `json:"transport"`      // http, socket (mcpgw stdio) or stdio
	// Protocol is the MCP version it speaks: the one its client
	// negotiated (or, at 2026-07-28, named in its requests); empty before
	// its first request.
	Protocol   string    `json:"protocol,omitempty"`
	LastActive time.Time `json:"lastActive,omitzero"`
	Mode       string    `json:"mode"`
	Dir        string    `json:"dir,omitempty"` // its project directory, when known
	Activated  int       `json:"activated"`     // tools ToolSearch activated
}

// Result is one search result of the playground, with why it ranked.
type Result struct {
	Tool        string  `json:"tool"`
	Description string  `json:"description"`
	Score       float64 `json:"score"`
	Why         string  `json:"why"`
}

// Project is a project directory of a live session whose servers wait
// for trust.
type Project struct {
	Dir     string          `json:"dir"`
	Servers []ProjectServer `json:"servers"`
}

// ProjectServer is one server such a project would start.
type ProjectServer struct {
	Name string `json:"name"`
	Run  string `json:"run"` // the command line (secrets masked), or the URL
}

// view is Data as the template renders it.
type view struct {
	*Data
	Uptime string
	CSS    template.CSS
	now    time.Time
}

// Ago is how long ago t was, as the page writes it.
func (v view) Ago(t time.Time) string { return api.Ago(v.now, t) }

// approvalChoice is one button of a pending approval.
type approvalChoice struct{ Value, Label string }

// ApprovalChoices are the page's buttons for a pending approval: the
// decisions Hub.Decide takes.
func (view) ApprovalChoices() []approvalChoice {
	return []approvalChoice{
		{"once", "Allow once"},
		{"tool", "Allow this tool for the session"},
		{"server", "Allow this server for the session"},
		{"deny", "Deny"},
	}
}

// stderrLines is how many of a server's last stderr lines the page
// shows; /-/logs gives more.
const stderrLines = 20

// pageData is what the page shows at now; query, if not empty, is a
// search of the tools as the model would make it.
func pageData(ctx context.Context, h Hub, query string, now time.Time) *Data {
	servers := h.Servers(ctx)
	d := &Data{Report: report(ctx, h, servers, now)}
	sessions := h.Sessions(ctx)
	users := map[string][]string{} // server → clients of the sessions that called it
	for _, sf := range sessions {
		ps := Session{Mode: sf.Mode, Dir: sf.Dir, Activated: sf.Activated, LastActive: sf.LastActive, Transport: "stdio"}
		switch {
		case sf.HTTP:
			ps.Transport = "http"
		case sf.Shim:
			ps.Transport = "socket"
		}
		if sf.ClientName != "" || sf.ClientVersion != "" {
			ps.Client = sf.ClientName + " " + sf.ClientVersion
		}
		ps.User, ps.Protocol = sf.User, sf.Protocol
		d.SessionList = append(d.SessionList, ps)
		for _, server := range sf.Servers {
			users[server] = append(users[server], ps.Client)
		}
	}
	d.Pending = pendingProjects(sessions)
	for i, f := range servers {
		s := Server{ServerReport: d.Report.Servers[i], Log: serverLines(h, f), Sessions: users[f.Name], Actionable: usable(f)}
		slices.Sort(s.Sessions)
		if s.Actionable {
			s.Stderr = h.Stderr(ctx, f.Name, stderrLines)
		}
		for _, t := range h.Tools(ctx, f.Name) {
			s.ToolList = append(s.ToolList, Tool{Name: t.Name, Description: surface.FirstLine(t.Description), Params: t.Params})
		}
		switch s.State {
		case "connected":
			s.Class = "ok"
			d.Connected++
		case "failed", "needs-auth":
			s.Class = "bad"
		case "connecting":
			s.Class = "wait"
		default:
			s.Class = "off"
		}
		d.Servers = append(d.Servers, s)
	}
	if query != "" {
		d.Query = query
		for _, hit := range h.Search(ctx, query, searchResults) {
			d.Results = append(d.Results, Result{Tool: hit.Tool, Description: surface.Shorten(surface.FirstLine(hit.Description), 160), Score: hit.Score, Why: hit.Why})
		}
	}
	return d
}

// searchResults is how many results the page's search shows.
const searchResults = 10

// pendingProjects are the project directories of sessions whose servers
// wait for trust, but those refused: each once, with each server once,
// sorted.
func pendingProjects(sessions []SessionFacts) []Project {
	byDir := map[string]*Project{}
	for _, sf := range sessions {
		pf := sf.Project
		if pf == nil || pf.Refused || len(pf.Servers) == 0 {
			continue
		}
		p := byDir[pf.Dir]
		if p == nil {
			p = &Project{Dir: pf.Dir}
			byDir[pf.Dir] = p
		}
		for _, srv := range pf.Servers {
			if !slices.ContainsFunc(p.Servers, func(ps ProjectServer) bool { return ps.Name == srv.Name }) {
				p.Servers = append(p.Servers, srv)
			}
		}
	}
	var out []Project
	for _, p := range byDir {
		slices.SortFunc(p.Servers, func(a, b ProjectServer) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b Project) int { return strings.Compare(a.Dir, b.Dir) })
	return out
}

// servePage is GET / (and the token form's POST /).
func servePage(h Hub) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		now := time.Now()
		data := pageData(r.Context(), h, r.URL.Query().Get("q"), now)
		if strings.Contains(r.Header.Get("Accept"), "application/json") {
			w.Header().Set("Content-Type", "application/json")
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			_ = enc.Encode(data)
			return
		}
		var buf bytes.Buffer
		if err := pageTmpl().Execute(&buf, view{Data: data, Uptime: api.Ago(now, data.StartedAt), CSS: template.CSS(pageCSS), now: now}); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; frame-ancestors 'none'")
		_, _ = w.Write(buf.Bytes())
	}
}
