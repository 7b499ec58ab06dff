package registry

// Reading one server definition of mcpServers.

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/tailscale/hujson"

	"github.com/mcpgw/mcpgw/cachefile"
)

// server resolves one server definition. It returns nil when the definition
// is invalid (the errors are recorded) or skipped (with a warning).
//
// Values are interpolated as pi-mcp-adapter does when it starts a server:
// ${VAR}, $env:VAR and {env:VAR} in args, env, cwd, url, headers and
// bearerToken (unset variables become "", with a warning; in url they are an
// error); "~" is expanded in cwd only; command is taken as written. Env,
// header and bearer token values follow the "!cmd" / "!!literal" convention
// described at interpolateSecret. A relative cwd is taken relative to the
// config file's directory, since the daemon's own working directory means
// nothing to the user.
//
// Hash is cachefile's identity hash of the definition (see identityHash),
// equal to pi-mcp-adapter's computeServerHash.
func (p *configParser) server(sm jsonMember, field string, settings *Settings) *Server {
	obj, ok := sm.value.Value.(*hujson.Object)
	if !ok {
		p.failf(sm.value, field, "must be an object, got %s", jsonKindName(sm.value))
		return nil
	}
	st := &serverParse{
		s:         &Server{Name: sm.name, Enabled: true, Lifecycle: LifecycleLazy, Source: p.file},
		field:     field,
		nerr:      len(p.errs),
		lifecycle: LifecycleLazy,
	}
	if line, _, ok := lineCol(p.data, sm.key.StartOffset); ok {
		st.s.Line = line
	}
	for _, m := range p.members(obj, field) {
		f := joinField(field, m.name)
		if !p.transportMember(st, m, f) && !p.behaviourMember(st, m, f) {
			p.unknownField(m, f, serverFields, serverFieldsForeign)
			st.unknown = append(st.unknown, m.name)
		}
	}
	if !p.checkTransport(st, sm) {
		return nil
	}
	p.resolveTransport(st)
	p.checkTokenExchange(st)
	p.resolveLifecycle(st, settings)
	if st.s.InheritEnv == nil && settings != nil {
		st.s.InheritEnv = settings.InheritEnv
	}
	if len(p.errs) > st.nerr {
		return nil
	}
	st.s.Hash = p.identityHash(sm, field)
	if st.s.Hash == "" {
		return nil
	}
	if st.s.TokenExchange != nil {
		st.s.Hash = exchangeHash(st.s.Hash, st.s.TokenExchange)
	}
	return st.s
}

// serverParse is the state of reading one server definition: the Server
// so far, and the members whose meaning depends on others.
type serverParse struct {
	s                       *Server
	field                   string
	nerr                    int // errors before this server
	commandV, urlV, socketV *hujson.Value
	bearerEnvV              *hujson.Value
	exchangeV               *hujson.Value // the tokenExchange block
	cwd, url, bearer        *jsonMember
	idle                    *time.Duration
	idleV                   *hujson.Value
	lifecycle               string
	stdioOnly, httpOnly     []jsonMember
	unknown                 []string // members mcpgw does not read
}

// transportMember reads a member that says how to reach the server; false
// when m is not one.
func (p *configParser) transportMember(st *serverParse, m jsonMember, f string) bool {
	s, v := st.s, m.value
	switch m.name {
	case "command":
		if x, ok := p.str(v, f); ok {
			if x == "" {
				p.failf(v, f, "must not be empty")
				break
			}
			s.Command, st.commandV = x, v
		}
	case "args":
		if list, ok := p.stringList(v, f); ok {
			s.Args = make([]string, len(list))
			for i, a := range list {
				s.Args[i] = p.interpolate(v, fmt.Sprintf("%s[%d]", f, i), a)
			}
			st.stdioOnly = append(st.stdioOnly, m)
		}
	case "env":
		if env, ok := p.stringMap(v, f); ok {
			s.Env = p.secrets(v, f, env)
			st.stdioOnly = append(st.stdioOnly, m)
		}
	case "cwd":
		if _, ok := p.str(v, f); ok {
			st.cwd = &m
			st.stdioOnly = append(st.stdioOnly, m)
		}
	case "url":
		if _, ok := p.str(v, f); ok {
			st.url, st.urlV = &m, v
		}
	case "headers":
		if h, ok := p.stringMap(v, f); ok {
			s.Headers = p.secrets(v, f, h)
			st.httpOnly = append(st.httpOnly, m)
		}
	case "auth":
		p.auth(st, m, f)
	case "oauth":
		p.oauth(st, m, f)
	case "tokenExchange":
		p.tokenExchange(st, m, f)
	case "bearerToken":
		if _, ok := p.str(v, f); ok {
			st.bearer = &m
			st.httpOnly = append(st.httpOnly, m)
		}
	case "bearerTokenEnv":
		if x, ok := p.str(v, f); ok {
			s.BearerTokenEnv, st.bearerEnvV = x, v
			st.httpOnly = append(st.httpOnly, m)
		}
	case "socket":
		st.socketV = v
	default:
		return false
	}
	return true
}

func (p *configParser) auth(st *serverParse, m jsonMember, f string) {
	v := m.value
	switch v.Value.Kind() {
	case 'n':
	case 'f':
		st.s.Auth = AuthNone
		st.httpOnly = append(st.httpOnly, m)
	case '"':
		x := hujsonString(*v)
		if x == AuthOAuth || x == AuthBearer {
			st.s.Auth = x
			st.httpOnly = append(st.httpOnly, m)
			return
		}
		p.fail(v, f, x, fmt.Errorf(`%q is not one of "oauth", "bearer", false`, x))
	default:
		p.failf(v, f, `must be "oauth", "bearer" or false, %s`, jsonGot(v, false))
	}
}

// behaviourMember reads a member that says how mcpgw treats the server;
// false when m is not one.
func (p *configParser) behaviourMember(st *serverParse, m jsonMember, f string) bool {
	s, v := st.s, m.value
	switch m.name {
	case "enabled":
		if b, ok := p.boolean(v, f); ok && !b {
			s.Enabled = false
		}
	case "disabled":
		if b, ok := p.boolean(v, f); ok && b {
			s.Enabled = false
		}
	case "lifecycle":
		if x, ok := p.str(v, f); ok && p.oneOf(v, f, x, LifecycleLazy, LifecycleEager, LifecycleKeepAlive, lifecycleLazyKeepAlive) {
			st.lifecycle = x
		}
	case "maxConcurrency":
		if n, ok := p.number(v, f, ""); ok {
			if n < 1 || n != float64(int(n)) || n > 1<<16 {
				p.failf(v, f, "must be a whole number from 1 to 65536")
				break
			}
			s.MaxConcurrency = int(n)
		}
	case "isolation":
		if x, ok := p.str(v, f); ok && p.oneOf(v, f, x, IsolationShared, IsolationSession, IsolationUser) {
			s.Isolation = x
			if x == IsolationUser {
				p.teamRules = append(p.teamRules, teamRule{v: v, field: f, off: errPerUserOff})
			}
		}
	case "idleTimeout":
		if d, ok := p.duration(v, f, time.Minute); ok {
			st.idle, st.idleV = &d, v
		}
	case "requestTimeoutMs":
		if d, ok := p.duration(v, f, time.Millisecond); ok {
			s.RequestTimeout = d
		}
	case "startupTimeoutMs":
		if d, ok := p.duration(v, f, time.Millisecond); ok {
			s.StartupTimeout = d
		}
	case "exposeResources":
		if b, ok := p.boolean(v, f); ok {
			s.ExposeResources = &b
		}
	case "includeTools", "excludeTools":
		p.toolFilter(st, m, f)
	case "toolPrefix":
		if x, ok := p.str(v, f); ok && p.oneOf(v, f, x, prefixModes...) {
			s.ToolPrefix = x
		}
	case "description":
		if x, ok := p.str(v, f); ok {
			s.Description = x
		}
	case "directTools":
		s.DirectTools = p.directTools(v, f)
	case "approveTools":
		s.ApproveTools = p.approval(v, f)
	case "autoApprove":
		s.AutoApprove = p.globs(v, f)
	case "visibleTo":
		s.VisibleTo = p.visibleTo(v, f)
	case "approveToolsFor":
		s.ApproveToolsFor = p.approveToolsFor(v, f)
	case "searchKeywords":
		s.SearchKeywords = p.searchKeywords(v, f)
	case "inheritEnv":
		if b, ok := p.boolean(v, f); ok {
			s.InheritEnv = &b
			st.stdioOnly = append(st.stdioOnly, m)
		}
	default:
		return false
	}
	return true
}

func (p *configParser) toolFilter(st *serverParse, m jsonMember, f string) {
	list := p.globs(m.value, f)
	if list == nil {
		return
	}
	if m.name == "includeTools" {
		st.s.IncludeTools = list
	} else {
		st.s.ExcludeTools = list
	}
}

// checkTransport requires exactly one of command and url and warns about
// members the chosen transport does not use. False when the server is
// skipped.
func (p *configParser) checkTransport(st *serverParse, sm jsonMember) bool {
	field := st.field
	switch {
	case st.commandV != nil && st.urlV != nil:
		p.failf(st.urlV, joinField(field, "url"), "cannot be combined with command; set exactly one of command and url")
	case st.commandV == nil && st.urlV == nil && st.socketV != nil && len(p.errs) == st.nerr:
		p.warnf(st.socketV, joinField(field, "socket"), "socket servers are not supported by mcpgw; server skipped")
		return false
	case st.commandV == nil && st.urlV == nil && len(p.errs) == st.nerr:
		p.failf(sm.key, field, "needs command or url%s", transportTypo(st.unknown))
	case st.socketV != nil:
		p.warnf(st.socketV, joinField(field, "socket"), "not supported by mcpgw; ignored")
	}
	if st.commandV != nil {
		for _, m := range st.httpOnly {
			p.warnf(m.key, joinField(field, m.name), "only used with url; ignored")
		}
	} else if st.urlV != nil {
		for _, m := range st.stdioOnly {
			p.warnf(m.key, joinField(field, m.name), "only used with command; ignored")
		}
	}
	return true
}

// resolveTransport interpolates the members whose values depend on the
// environment: cwd, url and the bearer token.
func (p *configParser) resolveTransport(st *serverParse) {
	s, field := st.s, st.field
	if st.cwd != nil {
		f := joinField(field, "cwd")
		s.Cwd = p.absPath(expandHome(p.interpolate(st.cwd.value, f, hujsonString(*st.cwd.value)), p.home))
	}
	if st.url != nil {
		s.URL = p.url(st.url.value, joinField(field, "url"), hujsonString(*st.url.value))
	}
	switch {
	case st.bearer != nil:
		s.BearerToken = p.interpolateSecret(st.bearer.value, joinField(field, "bearerToken"), hujsonString(*st.bearer.value))
	case IsOwnVar(s.BearerTokenEnv):
		p.warnf(st.bearerEnvV, joinField(field, "bearerTokenEnv"), "%s is mcpgw's own variable, never given to an upstream; ignored", s.BearerTokenEnv)
		s.BearerTokenEnv = ""
	case s.BearerTokenEnv != "":
		// Read again at every connect (see upstream), so that a rotated
		// token is used without a restart; here only checked.
		if _, ok := p.lookup(s.BearerTokenEnv); !ok && st.urlV != nil {
			p.warnf(st.bearerEnvV, joinField(field, "bearerTokenEnv"), "environment variable %s is not set", s.BearerTokenEnv)
		}
	}
}

// resolveLifecycle settles the lifecycle and the timeouts, defaults from
// settings applied.
func (p *configParser) resolveLifecycle(st *serverParse, settings *Settings) {
	s := st.s
	switch st.lifecycle {
	case LifecycleKeepAlive:
		// Health-checked and reconnected: never closed for idleness.
		s.Lifecycle = LifecycleKeepAlive
		if st.idle != nil {
			p.warnf(st.idleV, joinField(st.field, "idleTimeout"), "ignored for keep-alive servers")
		}
	case LifecycleEager, lifecycleLazyKeepAlive:
		// Once connected they stay connected unless idleTimeout says otherwise.
		s.Lifecycle = LifecycleEager
		if st.lifecycle == lifecycleLazyKeepAlive {
			s.Lifecycle = LifecycleLazy
		}
		if st.idle != nil {
			s.IdleTimeout = *st.idle
		}
	default:
		s.IdleTimeout = settings.IdleTimeout
		if st.idle != nil {
			s.IdleTimeout = *st.idle
		}
	}
	if s.RequestTimeout == 0 {
		s.RequestTimeout = settings.RequestTimeout
	}
	if s.StartupTimeout == 0 {
		s.StartupTimeout = settings.StartupTimeout
	}
}

// identityHash is cachefile.Hash of the definition as written, resolved
// against the same environment and home directory as the rest of the file.
// The identity is decoded from the definition itself rather than built from
// the Server, so that it includes what the adapter hashes and mcpgw ignores
// (protocolVersion, socket, requestHeadersCommand) and tells an explicit ""
// from an absent field. If those ignored fields are malformed they are left
// out (they already drew a warning).
func (p *configParser) identityHash(sm jsonMember, field string) string {
	env := cachefile.Env{Lookup: p.lookup, Home: p.home}
	def := sm.value.Clone()
	def.Standardize()
	var id cachefile.Identity
	err := json.Unmarshal(def.Pack(), &id)
	if err != nil {
		obj := def.Value.(*hujson.Object)
		obj.Members = slices.DeleteFunc(obj.Members, func(m hujson.ObjectMember) bool {
			switch hujsonString(m.Name) {
			case "socket", "protocolVersion", "requestHeadersCommand":
				return true
			}
			return false
		})
		err = json.Unmarshal(def.Pack(), &id)
	}
	var h string
	if err == nil {
		h, err = cachefile.HashEnv(id, env)
	}
	if err != nil {
		// Not reached for a definition that passed validation.
		p.failf(sm.key, field, "computing identity hash: %v", err)
		return ""
	}
	return h
}

// transportTypo is " (did you mean command for comand?)" when one of the
// unknown members of an entry with neither command nor url is a misspelt
// one of them.
func transportTypo(unknown []string) string {
	for _, u := range unknown {
		if s := suggestField(u, []string{"command", "url"}); s != "" {
			return fmt.Sprintf(" (did you mean %q for %q?)", s, u)
		}
	}
	return ""
}

// searchKeywords reads {"tool or glob": ["word", ...]}: extra words that
// help search find the tools a key matches (pi-mcp-adapter's field).
func (p *configParser) searchKeywords(v *hujson.Value, field string) map[string][]string {
	if jsonIsNull(v) {
		return nil
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		p.failf(v, field, `must be an object of tool names or globs to lists of words, e.g. {"search_code": ["grep"]}, got %s`, jsonKindName(v))
		return nil
	}
	out := map[string][]string{}
	for _, m := range p.members(obj, field) {
		if list, ok := p.stringList(m.value, joinField(field, m.name)); ok && len(list) > 0 {
			out[m.name] = list
		}
	}
	return out
}
