package registry

import (
	"net"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpgw/mcpgw/internal/loopback"
)

// pointsAtSelf reports why srv would make mcpgw talk to itself, or "" when
// it does not. Such a server would loop: a call through it comes back to
// the daemon, which calls it again. It catches
//
//   - mcpgw's stdio shim: a command whose base name is mcpgw with first
//     argument "stdio" (it connects to the running daemon);
//   - `mcpgw serve --stdio` on the same config file (it would start itself
//     again, without end);
//   - a URL whose port is the daemon's listen port (LoadOptions.Listen) and
//     whose host is the listen host, or a loopback name when the daemon
//     listens on loopback or on every interface.
func pointsAtSelf(s *Server, opts *LoadOptions, configPath string) string {
	if s.Command != "" {
		if !isMcpgw(s.Command) || len(s.Args) == 0 {
			return ""
		}
		switch s.Args[0] {
		case "stdio":
			return "runs mcpgw's stdio shim, which connects back to mcpgw itself"
		case "serve":
			stdio, config := false, ""
			for i := 1; i < len(s.Args); i++ {
				a := strings.TrimPrefix(s.Args[i], "-")
				switch {
				case a == "-stdio" || a == "stdio" || a == "-stdio=true" || a == "stdio=true":
					stdio = true
				case (a == "-config" || a == "config") && i+1 < len(s.Args):
					config = s.Args[i+1]
					i++
				case strings.HasPrefix(a, "-config="), strings.HasPrefix(a, "config="):
					_, config, _ = strings.Cut(a, "=")
				}
			}
			if stdio && (config == "" || samePath(config, configPath, s.Cwd, opts)) {
				return "runs `mcpgw serve --stdio` on this same config, which would start itself again"
			}
		}
		return ""
	}
	if s.URL == "" || opts == nil || opts.Listen == "" {
		return ""
	}
	u, err := neturl.Parse(s.URL)
	if err != nil {
		return ""
	}
	lhost, lport, err := net.SplitHostPort(opts.Listen)
	if err != nil {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	if port != lport {
		return ""
	}
	host := u.Hostname()
	if strings.EqualFold(host, lhost) || loopback.IsHost(host) && (loopback.IsHost(lhost) || isUnspecifiedHost(lhost)) {
		return "points at mcpgw's own address " + opts.Listen
	}
	return ""
}

func isUnspecifiedHost(h string) bool {
	if h == "" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsUnspecified()
}

// samePath reports whether the config path p (as written in a server's
// arguments, relative to its cwd) names the file configPath.
func samePath(p, configPath, cwd string, opts *LoadOptions) bool {
	p = expandHome(p, opts.home())
	if !filepath.IsAbs(p) {
		if cwd == "" {
			return false
		}
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p) == filepath.Clean(configPath)
}

// isMcpgw reports whether command runs mcpgw: named so, or the very
// binary that is running (installed under another name, or a build of
// one's own).
func isMcpgw(command string) bool {
	if strings.TrimSuffix(filepath.Base(command), ".exe") == "mcpgw" {
		return true
	}
	if !filepath.IsAbs(command) {
		return false
	}
	self, err := os.Executable()
	if err != nil {
		return false
	}
	a, err := os.Stat(command)
	if err != nil {
		return false
	}
	b, err := os.Stat(self)
	return err == nil && os.SameFile(a, b)
}
