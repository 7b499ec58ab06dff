package gateway

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpgw/mcpgw/gateway/statuspage"
	"github.com/mcpgw/mcpgw/registry"
)

// Projects whose files define servers that may not start until the user
// trusts the directory: the status page lists them with the exact commands
// they would run, and trusts one (as `mcpgw trust DIR`) or lets the user
// refuse it, which hides it until the daemon stops.

// pendingProjects lists the untrusted projects of live sessions, but for
// those refused.
func (s *Server) pendingProjects() []statuspage.Project {
	byDir := map[string]*statuspage.Project{}
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
				p = &statuspage.Project{Dir: dir}
				byDir[dir] = p
			}
			run := srv.MaskedCommand()
			if srv.IsRemote() {
				run = registry.MaskURL(srv.URL)
			}
			if !slices.ContainsFunc(p.Servers, func(ps statuspage.ProjectServer) bool { return ps.Name == name }) {
				p.Servers = append(p.Servers, statuspage.ProjectServer{Name: name, Run: run})
			}
		}
	}
	var out []statuspage.Project
	for _, p := range byDir {
		slices.SortFunc(p.Servers, func(a, b statuspage.ProjectServer) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b statuspage.Project) int { return strings.Compare(a.Dir, b.Dir) })
	return out
}

func (s *Server) refused(dir string) bool {
	s.overrideMu.Lock()
	defer s.overrideMu.Unlock()
	return s.refusedDirs[dir]
}
