package registry

import (
	"fmt"
	neturl "net/url"
	"path/filepath"
	"regexp"
	"strings"
)

// secretName matches names of flags, query parameters and the like whose
// values are secrets.
var secretName = regexp.MustCompile(`(?i)(token|secret|passw(or)?d|pwd|api[-_]?key|apikey|auth|credential|private[-_]?key|access[-_]?key|signature|sig)$|^(key|pat)$`)

// secretValue matches values that look like credentials whatever their
// name: well-known token prefixes, and long opaque strings.
var secretValue = regexp.MustCompile(`^(sk-|sk_|ghp_|gho_|ghu_|ghs_|github_pat_|xox[abprs]-|glpat-|AKIA|AIza|ya29\.|eyJ)[A-Za-z0-9._\-]+$|^[A-Za-z0-9+/_\-]{32,}={0,2}$`)

const masked = "***"

// MaskedCommand is the server's command line as it may be shown (mcpgw
// check, logs): the value after a flag named like a secret (--token X,
// --api-key=X) and any argument that looks like a credential are masked.
func (s *Server) MaskedCommand() string {
	parts := []string{quoteArg(s.Command)}
	maskNext := false
	for _, a := range s.Args {
		switch {
		case maskNext:
			a, maskNext = masked, false
		case strings.HasPrefix(a, "-"):
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if secretName.MatchString(name) {
				if hasValue {
					a = a[:strings.Index(a, "=")+1] + masked
				} else {
					maskNext = true
				}
			}
		case secretValue.MatchString(a) && !strings.Contains(a, string(filepath.Separator)):
			a = masked
		default:
			if k, _, ok := strings.Cut(a, "="); ok && secretName.MatchString(k) {
				a = k + "=" + masked
			}
		}
		parts = append(parts, quoteArg(a))
	}
	return strings.Join(parts, " ")
}

func quoteArg(a string) string {
	if a == "" || strings.ContainsAny(a, " \t\"'") {
		return fmt.Sprintf("%q", a)
	}
	return a
}

// MaskURL is raw as it may be shown (status, errors, logs, the model):
// the password and the values of query parameters named like secrets or
// looking like credentials are masked; a URL that does not parse is
// masked whole.
func MaskURL(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil {
		return masked
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = neturl.UserPassword(u.User.Username(), maskMark)
		}
	}
	q := u.Query()
	changed := false
	for k, vs := range q {
		for i, v := range vs {
			if secretName.MatchString(k) || secretValue.MatchString(v) {
				vs[i] = maskMark
				changed = true
			}
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return strings.ReplaceAll(u.String(), maskMark, masked)
}

// maskMark stands for a masked value until the URL is encoded (which
// would escape "***").
const maskMark = "MCPGW-MASKED"
