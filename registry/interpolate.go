package registry

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Interpolation follows pi-mcp-adapter's interpolateEnvVars exactly: three
// passes, in this order, each replacing every match of its syntax with the
// variable's value, or "" when it is unset. A variable name is \w+
// ([A-Za-z0-9_]). Because the passes run one after another, a value
// substituted by an earlier pass is scanned by the later ones, as in the
// adapter.
var interpolationPasses = []*regexp.Regexp{
	regexp.MustCompile(`\$\{(\w+)\}`),   // ${VAR}
	regexp.MustCompile(`\$env:(\w+)`),   // $env:VAR
	regexp.MustCompile(`\{env:(\w+)\}`), // {env:VAR}
}

// interpolate replaces ${VAR}, $env:VAR and {env:VAR} in s, looking
// variables up with lookup. Names of unset variables are appended to
// missing (when not nil), once each, in order of appearance.
func interpolate(s string, lookup func(string) (string, bool), missing *[]string) string {
	if !strings.ContainsAny(s, "${") {
		return s
	}
	for _, re := range interpolationPasses {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			name := re.FindStringSubmatch(m)[1]
			v, ok := lookup(name)
			if !ok && missing != nil && !slices.Contains(*missing, name) {
				*missing = append(*missing, name)
			}
			return v
		})
	}
	return s
}

// ownVarPrefix starts the names of mcpgw's own environment variables: the
// daemon's token, its listen address and the like. None of them is ever
// interpolated into a server's definition, which its upstream receives
// (env, args, headers, url), nor put in an upstream's environment (see
// ServerEnv): they are the daemon's, never an upstream's.
const ownVarPrefix = "MCPGW_"

// IsOwnVar reports whether name is one of mcpgw's own variables. Case is
// ignored: on Windows ${mcpgw_token} reads MCPGW_TOKEN.
func IsOwnVar(name string) bool {
	return len(name) >= len(ownVarPrefix) && strings.EqualFold(name[:len(ownVarPrefix)], ownVarPrefix)
}

// withoutOwnVars returns lookup with mcpgw's own variables unset, so that
// interpolation reports them missing instead of expanding them.
func withoutOwnVars(lookup func(string) (string, bool)) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if IsOwnVar(name) {
			return "", false
		}
		return lookup(name)
	}
}

// interpolateSecret interpolates an env or headers value (and bearerToken)
// the way pi-mcp-adapter's interpolateSecretExpression does, except that the
// registry never runs a command:
//
//   - "!cmd" is a command whose output is the secret. It is returned
//     verbatim, for the upstream to run at connect time.
//   - "!!text" escapes a literal leading "!". The text after "!!" is
//     interpolated and the "!!" kept, so the upstream can still tell it from
//     a command; the value to use is the result minus its first "!".
//   - anything else is interpolated.
func interpolateSecret(s string, lookup func(string) (string, bool), missing *[]string) string {
	switch {
	case strings.HasPrefix(s, "!!"):
		return "!!" + interpolate(s[2:], lookup, missing)
	case strings.HasPrefix(s, "!"):
		return s
	default:
		return interpolate(s, lookup, missing)
	}
}

// expandHome expands a leading "~" the way pi-mcp-adapter's
// resolveConfigPath does: "~" alone, "~/rest" and "~\rest" only; "~user" is
// left alone.
func expandHome(p, home string) string {
	switch {
	case p == "~":
		return home
	case strings.HasPrefix(p, "~/"), strings.HasPrefix(p, `~\`):
		return filepath.Join(home, p[2:])
	}
	return p
}
