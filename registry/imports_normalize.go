package registry

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// normalizer turns one server definition from another tool's file into
// mcpgw's mcpServers shape, so that mcpgw's parser reads every file the
// same way:
//
//   - "type" (and Cline's "transportType") is dropped once checked: stdio,
//     local, http, streamable-http, sse and remote are all told apart by
//     command or url; any other type skips the server.
//   - "command" given as an array (opencode, Pi's settings.json) becomes
//     command and args; "environment" becomes env; Windsurf's "serverUrl"
//     becomes url; opencode's "oauth" becomes auth; "disabledTools" becomes
//     excludeTools.
//   - Codex's bearer_token_env_var, http_headers, env_http_headers,
//     startup_timeout_sec/_ms, tool_timeout_sec, enabled_tools and
//     disabled_tools become their mcpgw fields, as pi-mcp-adapter maps them
//     where it does.
//   - Numbers and booleans in args, env and headers become strings (the
//     other tools accept them).
//   - VS Code / Cursor / Claude variables: ${env:NAME} becomes ${NAME},
//     ${NAME:-default} is resolved, ${userHome}, ${workspaceFolder},
//     ${workspaceFolderBasename} and ${pathSeparator} are replaced; a
//     ${input:...} skips the server (only VS Code can prompt for it).
//   - A relative cwd is made absolute (against the project directory for
//     project files, else the file's directory), so that the identity hash
//     tells two of them apart; in a project, a stdio server without cwd
//     runs in the project directory, as the agents run it.
//   - Restrictions are kept (see restrictions): Pi's "exposure": "hidden"
//     and toolExposure's hidden tools become excludeTools; Claude's and
//     Cursor's autoApprove and Cline's alwaysAllow become autoApprove.
//   - Fields of the other tools that mean nothing here (timeout, gallery,
//     ...) are dropped silently; envFile is dropped with a warning.
type normalizer struct {
	r      *sourceReader
	file   string
	format sourceFormat
	field  string // servers.NAME

	warns      []string
	notes      []string // how the entry's restrictions became mcpgw's (Server.PolicyNotes)
	defaultCwd bool     // cwd was set to the project directory
}

// dropped are fields of other tools' formats that mcpgw ignores silently.
var droppedForeignFields = []string{
	"timeout", "gallery", "version", "dev", "trust", "name", "env_vars",
}

var transportTypes = []string{
	"stdio", "local", "http", "streamable-http", "streamablehttp", "streamable_http", "sse", "remote",
}

func (n *normalizer) warnf(field, format string, args ...any) {
	f := n.field
	if field != "" {
		f = joinField(f, field)
	}
	n.warns = append(n.warns, fmt.Sprintf("%s: %s: %s", n.file, f, fmt.Sprintf(format, args...)))
}

// normalize returns the definition in mcpgw's shape, or a reason to skip
// the server. Values it cannot make sense of are left for the parser to
// report.
func (n *normalizer) normalize(v any) (def any, skip string) {
	in, ok := v.(map[string]any)
	if !ok {
		return v, ""
	}
	obj := maps.Clone(in)
	if skip := n.shape(obj); skip != "" {
		return nil, skip
	}
	if input := n.interpolate(obj); input != "" {
		return nil, fmt.Sprintf("uses ${%s}, which only VS Code can prompt for", input)
	}
	n.workingDir(obj)
	return obj, ""
}

// shape turns another tool's entry into mcpgw's field names and shapes:
// transport types checked and dropped, a command array split, renamed and
// tool-specific fields, foreign fields dropped. It returns why the entry
// is skipped, if it is.
func (n *normalizer) shape(obj map[string]any) (skip string) {
	for _, k := range []string{"type", "transportType"} {
		t, ok := obj[k].(string)
		if !ok {
			continue
		}
		if !slices.Contains(transportTypes, strings.ToLower(t)) {
			return fmt.Sprintf("%s %q is not supported by mcpgw", k, t)
		}
		delete(obj, k)
	}
	if arr, ok := obj["command"].([]any); ok && len(arr) > 0 {
		if c, ok := arr[0].(string); ok {
			args := slices.Clone(arr[1:])
			if old, ok := obj["args"].([]any); ok {
				args = append(args, old...)
			}
			obj["command"] = c
			if len(args) > 0 {
				obj["args"] = args
			}
		}
	}
	n.rename(obj, "environment", "env")
	n.rename(obj, "serverUrl", "url")
	n.rename(obj, "httpUrl", "url")
	n.rename(obj, "disabledTools", "excludeTools")
	switch n.format {
	case formatOpenCode:
		if o, ok := obj["oauth"]; ok {
			if _, has := obj["auth"]; !has {
				switch o := o.(type) {
				case bool:
					if !o {
						obj["auth"] = false
					}
				case map[string]any:
					obj["auth"] = AuthOAuth
				}
			}
			delete(obj, "oauth")
		}
	case formatCodexTOML, formatCodexJSON:
		n.codex(obj)
	}
	n.restrictions(obj)
	for _, k := range droppedForeignFields {
		delete(obj, k)
	}
	if _, ok := obj["envFile"]; ok {
		n.warnf("envFile", "not supported by mcpgw; ignored (set env instead)")
		delete(obj, "envFile")
	}
	return ""
}

// interpolate turns scalars into strings and expands variables in the
// command, url, args, env, headers and cwd. It returns the first input
// variable (${input:...}) found, which mcpgw cannot expand.
func (n *normalizer) interpolate(obj map[string]any) (input string) {
	str := func(s string) string {
		s, in := n.vars(s)
		if in != "" && input == "" {
			input = in
		}
		return s
	}
	for _, k := range []string{"command", "url", "cwd"} {
		if s, ok := obj[k].(string); ok {
			obj[k] = str(s)
		}
	}
	if arr, ok := obj["args"].([]any); ok {
		arr = slices.Clone(arr)
		for i, a := range arr {
			if s, ok := scalarString(a); ok {
				arr[i] = str(s)
			}
		}
		obj["args"] = arr
	}
	for _, k := range []string{"env", "headers"} {
		m, ok := obj[k].(map[string]any)
		if !ok {
			continue
		}
		m = maps.Clone(m)
		for key, val := range m {
			if s, ok := scalarString(val); ok {
				m[key] = str(s)
			}
		}
		obj[k] = m
	}
	return input
}

// workingDir resolves a relative cwd against the project (or the file's
// directory), and gives a project's stdio server the project as its cwd.
func (n *normalizer) workingDir(obj map[string]any) {
	if c, ok := obj["cwd"].(string); ok {
		if c != "" && !filepath.IsAbs(c) && !strings.HasPrefix(c, "~") && !strings.ContainsAny(c, "${") {
			base := n.r.project
			if base == "" {
				base = filepath.Dir(n.file)
			}
			c = filepath.Join(base, c)
		}
		obj["cwd"] = c
	} else if _, isCmd := obj["command"].(string); isCmd && n.r.project != "" && obj["cwd"] == nil {
		obj["cwd"] = n.r.project
		n.defaultCwd = true
	}
}

// rename moves obj[from] to obj[to] unless to is set already.
func (n *normalizer) rename(obj map[string]any, from, to string) {
	v, ok := obj[from]
	if !ok {
		return
	}
	delete(obj, from)
	if _, has := obj[to]; has {
		n.warnf(from, "ignored because %s is also set", to)
		return
	}
	obj[to] = v
	if strings.HasSuffix(to, "Tools") {
		n.notes = append(n.notes, fmt.Sprintf("%s %s → %s", from, compactJSON(v), to))
	}
}

// compactJSON is v as JSON on one line, for notes.
func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// codex maps Codex's config.toml server fields.
func (n *normalizer) codex(obj map[string]any) {
	if env, ok := obj["bearer_token_env_var"].(string); ok {
		delete(obj, "bearer_token_env_var")
		obj["bearerTokenEnv"] = env
		if _, has := obj["auth"]; !has {
			obj["auth"] = AuthBearer
		}
	}
	headers := map[string]any{}
	if h, ok := obj["headers"].(map[string]any); ok {
		maps.Copy(headers, h)
	}
	merged := false
	if h, ok := obj["http_headers"].(map[string]any); ok {
		delete(obj, "http_headers")
		maps.Copy(headers, h)
		merged = true
	}
	if h, ok := obj["env_http_headers"].(map[string]any); ok {
		delete(obj, "env_http_headers")
		for k, v := range h {
			if name, ok := v.(string); ok {
				if _, set := headers[k]; !set {
					headers[k] = "$env:" + name
				}
			}
		}
		merged = true
	}
	if merged {
		obj["headers"] = headers
	}
	n.codexDuration(obj, "startup_timeout_sec", "startupTimeoutMs", 1000)
	n.codexDuration(obj, "startup_timeout_ms", "startupTimeoutMs", 1)
	n.codexDuration(obj, "tool_timeout_sec", "requestTimeoutMs", 1000)
	n.rename(obj, "enabled_tools", "includeTools")
	n.rename(obj, "disabled_tools", "excludeTools")
}

// codexDuration moves a Codex duration to an mcpgw millisecond field; a
// value that is not a number is moved as it is, for the parser to report.
func (n *normalizer) codexDuration(obj map[string]any, from, to string, scale float64) {
	v, ok := obj[from]
	if !ok {
		return
	}
	if f, ok := number(v); ok {
		v = json.Number(strconv.FormatFloat(f*scale, 'f', -1, 64))
	}
	obj[from] = v
	n.rename(obj, from, to)
}

func number(v any) (float64, bool) {
	switch v := v.(type) {
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	case int64:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}

// scalarString returns a string, number or boolean as a string.
func scalarString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case bool:
		return strconv.FormatBool(v), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	}
	return "", false
}

var (
	foreignVarRE   = regexp.MustCompile(`\$\{([^{}]*)\}`)
	defaultValueRE = regexp.MustCompile(`^(\w+):-(.*)$`)
	wordRE         = regexp.MustCompile(`^\w+$`)
)

// vars rewrites other tools' variables (see normalizer). It returns the
// first ${input:...} reference's body, if any.
func (n *normalizer) vars(s string) (out, input string) {
	if !strings.Contains(s, "${") {
		return s, ""
	}
	out = foreignVarRE.ReplaceAllStringFunc(s, func(m string) string {
		body := m[2 : len(m)-1]
		switch {
		case strings.HasPrefix(body, "env:") && wordRE.MatchString(body[4:]):
			return "${" + body[4:] + "}"
		case strings.HasPrefix(body, "input:"):
			if input == "" {
				input = body
			}
			return m
		case body == "userHome":
			return n.r.opts.home()
		case body == "pathSeparator" || body == "/":
			return string(filepath.Separator)
		case body == "workspaceFolder" || body == "workspaceFolderBasename":
			if n.r.project == "" {
				n.warnf("", "${%s} has no meaning outside a project; left as written", body)
				return m
			}
			if body == "workspaceFolder" {
				return n.r.project
			}
			return filepath.Base(n.r.project)
		case wordRE.MatchString(body):
			return m // mcpgw's own ${VAR}
		}
		if d := defaultValueRE.FindStringSubmatch(body); d != nil {
			if n.r.untrusted {
				return "${" + d[1] + "}"
			}
			if v, ok := n.r.opts.lookup()(d[1]); ok && v != "" {
				return "${" + d[1] + "}"
			}
			return d[2]
		}
		return m
	})
	return out, input
}

// restrictions turns the other formats' ways of restricting tools into
// mcpgw's, so that nothing a user restricted becomes callable behind
// mcpgw:
//
//   - Pi's "exposure": "hidden" hides the whole server: excludeTools ["*"];
//     its other values say how Pi shows tools and need no mapping.
//   - Pi's "toolExposure": {"glob": "hidden"} hides those tools: each such
//     glob joins excludeTools.
//   - "autoApprove" (Claude, Cursor) and "alwaysAllow" (Cline, Roo) list
//     tools the user never wants to be asked about: autoApprove.
//
// A value of a shape mcpgw cannot read is reported, never dropped.
func (n *normalizer) restrictions(obj map[string]any) {
	var exclude []any
	if e, ok := obj["exposure"]; ok {
		switch e := e.(type) {
		case string:
			if strings.EqualFold(e, "hidden") {
				exclude = append(exclude, "*")
				n.notes = append(n.notes, `exposure "hidden" → excludeTools ["*"]`)
			}
		default:
			n.warnf("exposure", "must be a string, got %s; ignored", goKindName(e))
		}
		delete(obj, "exposure")
	}
	if te, ok := obj["toolExposure"]; ok {
		m, isMap := te.(map[string]any)
		if !isMap {
			n.warnf("toolExposure", "must be an object, got %s; ignored", goKindName(te))
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if s, _ := m[k].(string); strings.EqualFold(s, "hidden") {
				exclude = append(exclude, k)
				n.notes = append(n.notes, fmt.Sprintf("toolExposure %q: \"hidden\" → excludeTools", k))
			}
		}
		delete(obj, "toolExposure")
	}
	if len(exclude) > 0 {
		old, _ := obj["excludeTools"].([]any)
		obj["excludeTools"] = append(slices.Clone(old), exclude...)
	}
	var auto []any
	for _, k := range []string{"autoApprove", "alwaysAllow"} {
		v, ok := obj[k]
		if !ok {
			continue
		}
		delete(obj, k)
		list, isList := v.([]any)
		if !isList {
			n.warnf(k, "must be a list of tool names, got %s; ignored", goKindName(v))
			continue
		}
		auto = append(auto, list...)
		if k != "autoApprove" {
			n.notes = append(n.notes, fmt.Sprintf("%s %s → autoApprove (never asked)", k, compactJSON(list)))
		}
	}
	if len(auto) > 0 {
		obj["autoApprove"] = auto
	}
}
