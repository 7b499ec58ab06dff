// Package statuspage is the daemon's status page and its actions:
// http://127.0.0.1:7332/ on the daemon's listener, with the same
// protection as the control API. Server-rendered, readable without
// JavaScript (which only refreshes it in place), no assets from elsewhere.
//
// The page reads and asks the daemon through Daemon; it knows nothing of
// sessions, upstreams or the catalogue.
package statuspage

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
)

var (
	//go:embed ui/page.html
	pageHTML string
	//go:embed ui/style.css
	pageCSS  string
	pageTmpl = template.Must(template.New("page").Parse(pageHTML))
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
	Daemon     []string `json:"log,omitempty"`      // the daemon's last lines about it
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
	Client    string `json:"client"`    // name and version from initialize
	Transport string `json:"transport"` // http, socket (mcpgw stdio) or stdio
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
// decisions Daemon.Decide takes.
func (view) ApprovalChoices() []approvalChoice {
	return []approvalChoice{
		{"once", "Allow once"},
		{"tool", "Allow this tool for the session"},
		{"server", "Allow this server for the session"},
		{"deny", "Deny"},
	}
}

// servePage is GET / (and the token form's POST /).
func servePage(d Daemon) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		data := d.PageData(r.URL.Query().Get("q"))
		for i := range data.Servers {
			s := &data.Servers[i]
			switch s.State {
			case "connected":
				s.Class = "ok"
				data.Connected++
			case "failed", "needs-auth":
				s.Class = "bad"
			case "connecting":
				s.Class = "wait"
			default:
				s.Class = "off"
			}
		}
		if strings.Contains(r.Header.Get("Accept"), "application/json") {
			w.Header().Set("Content-Type", "application/json")
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			_ = enc.Encode(data)
			return
		}
		now := time.Now()
		var buf bytes.Buffer
		if err := pageTmpl.Execute(&buf, view{Data: data, Uptime: api.Ago(now, data.StartedAt), CSS: template.CSS(pageCSS), now: now}); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; frame-ancestors 'none'")
		_, _ = w.Write(buf.Bytes())
	}
}
