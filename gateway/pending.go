package gateway

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpgw/mcpgw/registry"
)

// Projects whose files define servers that may not start until the user
// trusts the directory: the status page lists them with the exact commands
// they would run, and trusts one (as `mcpgw trust DIR`) or lets the user
// refuse it, which hides it until the daemon stops.

// pendingProject is a project directory of a live session whose servers
// wait for trust.
type pendingProject struct {
	Dir     string          `json:"dir"`
	Servers []pendingServer `json:"servers"`
}

// pendingServer is one server such a project would start.
type pendingServer struct {
	Name string `json:"name"`
	Run  string `json:"run"` // the command line (secrets masked), or the URL
}

// pendingProjects lists the untrusted projects of live sessions, but for
// those refused.
func (s *Server) pendingProjects() []pendingProject {
	byDir := map[string]*pendingProject{}
	for _, ss := range s.sessionList() {
		ov := ss.overlay.Load()
		if ov == nil || ss.opts.Cwd == "" {
			continue
		}
		dir, err := filepath.Abs(ss.opts.Cwd)
		if err != nil || s.refused(dir) {
			continue
		}
		for name, srv := range ov.Servers {
			if !srv.Untrusted {
				continue
			}
			p := byDir[dir]
			if p == nil {
				p = &pendingProject{Dir: dir}
				byDir[dir] = p
			}
			run := srv.MaskedCommand()
			if srv.IsRemote() {
				run = registry.MaskURL(srv.URL)
			}
			if !slices.ContainsFunc(p.Servers, func(ps pendingServer) bool { return ps.Name == name }) {
				p.Servers = append(p.Servers, pendingServer{Name: name, Run: run})
			}
		}
	}
	var out []pendingProject
	for _, p := range byDir {
		slices.SortFunc(p.Servers, func(a, b pendingServer) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b pendingProject) int { return strings.Compare(a.Dir, b.Dir) })
	return out
}

func (s *Server) refused(dir string) bool {
	s.overrideMu.Lock()
	defer s.overrideMu.Unlock()
	return s.refusedDirs[dir]
}

// serveTrust is POST /-/trust and /-/refuse with dir=DIR, a directory the
// page lists as pending: trust it (its servers may start in every session
// working there), or hide it until the daemon stops.
func (s *Server) serveTrust(trust bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		dir := r.FormValue("dir")
		if !slices.ContainsFunc(s.pendingProjects(), func(p pendingProject) bool { return p.Dir == dir }) {
			http.Error(w, fmt.Sprintf("%q is not a project waiting for trust", dir), http.StatusNotFound)
			return
		}
		msg := "refused " + dir + " until the daemon stops; its servers do not start"
		if trust {
			if s.opts.Trust == nil {
				http.Error(w, "no trust store", http.StatusConflict)
				return
			}
			var err error
			if msg, err = s.opts.Trust().Trust(dir); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			s.log.Info("project trusted from the status page", "dir", dir)
			s.RefreshProjects()
		} else {
			s.overrideMu.Lock()
			if s.refusedDirs == nil {
				s.refusedDirs = map[string]bool{}
			}
			s.refusedDirs[dir] = true
			s.overrideMu.Unlock()
		}
		if isForm(r) {
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, msg)
	}
}
