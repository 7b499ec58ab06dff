package gateway

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"time"
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

// pageData is what the page shows.
type pageData struct {
	*Report
	Uptime    string
	Connected int
	CSS       template.CSS
	Servers   []pageServer
	now       time.Time
}

// Ago is how long ago t was, as the page writes it.
func (d pageData) Ago(t time.Time) string { return since(d.now, t) }

// pageServer is one server's row and log.
type pageServer struct {
	ServerReport
	Class      string   // ok, bad, wait or off: the state's colour
	Actionable bool     // may be (re)connected from the page
	Stderr     []string // its last stderr lines
	Daemon     []string // the daemon's last lines about it
}

func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	rep := s.Status()
	now := time.Now()
	d := pageData{Report: rep, Uptime: since(now, rep.StartedAt), CSS: template.CSS(pageCSS), now: now}
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
		if sv, ok := v.Server(sr.Name); ok && sv.Server.Enabled && !sv.Server.Untrusted {
			ps.Actionable = true
			ps.Stderr = s.pool.Upstream(sv.Server).Stderr(20)
		}
		d.Servers = append(d.Servers, ps)
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
