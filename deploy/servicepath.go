package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// DaemonPATH is the PATH a daemon runs upstreams with: the installed
// service's (`mcpgw service install` writes the installing shell's PATH
// into the unit or agent file), else this process's own, which a daemon
// that `mcpgw stdio` starts inherits. from says which.
func DaemonPATH() (path, from string) {
	home, _ := os.UserHomeDir()
	configHome := os.Getenv("XDG_CONFIG_HOME")
	if configHome == "" || !filepath.IsAbs(configHome) {
		configHome = filepath.Join(home, ".config")
	}
	m := &serviceManager{goos: runtime.GOOS, home: home, configHome: configHome}
	if file, err := m.file(); err == nil {
		if data, err := os.ReadFile(file); err == nil {
			if p, ok := servicePATH(runtime.GOOS, data); ok {
				return p, "the service's, in " + file
			}
		}
	}
	return os.Getenv("PATH"), "this shell's (no service installed; a daemon `mcpgw stdio` starts inherits its client's)"
}

var (
	unitPATH  = regexp.MustCompile(`(?m)^Environment="PATH=((?:[^"\\]|\\.)*)"\s*$`)
	plistPATH = regexp.MustCompile(`<key>PATH</key>\s*<string>([^<]*)</string>`)
)

// servicePATH reads the PATH from a service file mcpgw wrote.
func servicePATH(goos string, data []byte) (string, bool) {
	if goos == "darwin" {
		m := plistPATH.FindSubmatch(data)
		if m == nil {
			return "", false
		}
		r := strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&#34;", `"`, "&#39;", "'")
		return r.Replace(string(m[1])), true
	}
	m := unitPATH.FindSubmatch(data)
	if m == nil {
		return "", false
	}
	r := strings.NewReplacer(`\\`, `\`, `\"`, `"`, "%%", "%", `\n`, "\n")
	return r.Replace(string(m[1])), true
}
