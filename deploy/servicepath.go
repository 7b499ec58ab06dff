package deploy

import (
	"os"
	"regexp"
	"runtime"
	"strings"
)

// DaemonPATH is the PATH a daemon runs upstreams with: the installed
// service's (`mcpgw service install` writes the installing shell's PATH
// into the unit or agent file), read from serviceFile, else this
// process's own (serviceFile is then empty), which a daemon that `mcpgw
// stdio` starts inherits.
func DaemonPATH() (path, serviceFile string) {
	home, _ := os.UserHomeDir()
	m := &Service{goos: runtime.GOOS, home: home, configHome: configHome(home)}
	if file, err := m.File(); err == nil {
		if data, err := os.ReadFile(file); err == nil {
			if p, ok := servicePATH(runtime.GOOS, data); ok {
				return p, file
			}
		}
	}
	return os.Getenv("PATH"), ""
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
