package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	neturl "net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/tailscale/hujson"
)

// The config file is pi-mcp-adapter's mcp.json, read as JSON with comments
// and trailing commas (a file of only comments is an empty config):
//
//	{
//	  "mcpServers": {            // or "mcp-servers"
//	    "github": {
//	      "url": "https://api.githubcopilot.com/mcp",
//	      "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"},
//	      "lifecycle": "lazy",   // lazy | eager | keep-alive | lazy-keep-alive
//	      "idleTimeout": 10,     // minutes; 0 = never
//	      "isolation": "shared", // shared | session (an upstream per session)
//	    },
//	    "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "~/src"]},
//	  },
//	  "imports": ["cursor"],
//	  "settings": {"toolPrefix": "server", "idleTimeout": 10, "cacheMaxAge": 10080},
//	}
//
// Units follow the adapter: idleTimeout in minutes, requestTimeoutMs and
// startupTimeoutMs in milliseconds; fractions are allowed. cacheMaxAge,
// which the adapter does not have, is in minutes like idleTimeout (default
// 10080, 7 days; 0 = entries never expire). Fields pi-mcp-adapter defines
// but mcpgw does not use, and unknown fields, are accepted with a warning:
// the file may be shared with other tools.

// Values of Settings.OAuthCredentialStore.
const (
	CredentialStoreFile    = "file"
	CredentialStoreKeyring = "keyring"
)

// Mode is what a downstream session sees (Settings.Mode).
type Mode string

// Modes.
const (
	ModeProxy      Mode = "proxy"      // one `mcp` tool (default)
	ModeToolSearch Mode = "toolsearch" // `ToolSearch` plus direct and activated tools
	ModeDirect     Mode = "direct"     // every tool directly
)

// Auth values of Server.Auth. "" means not set: OAuth is detected when the
// server asks for it (pi-mcp-adapter's default).
const (
	AuthOAuth  = "oauth"
	AuthBearer = "bearer"
	AuthNone   = "none" // written `"auth": false` in the file
)

// Defaults applied by Load.
const (
	DefaultIdleTimeout = 10 * time.Minute
	DefaultCacheMaxAge = 7 * 24 * time.Hour
)

// LoadOptions are optional parameters of Load and Parse. A nil *LoadOptions
// means the process environment and home directory.
type LoadOptions struct {
	// Getenv looks up environment variables for interpolation; an empty
	// value counts as unset. nil means the process environment (where a
	// variable set to "" is set).
	Getenv func(string) string
	// Home is the home directory for "~" expansion; "" means
	// os.UserHomeDir.
	Home string
	// Listen is the daemon's own listen address (host:port). A server
	// whose URL points at it is skipped, so that mcpgw never proxies to
	// itself; "" checks only for the stdio shim (see imports.go).
	Listen string
	// TrustFile is the trust store (see TrustStore) to load into
	// Config.Trust and to count among Config.Files; "" means none, so
	// no project is trusted.
	TrustFile string
	// SkipBroken, when set, is asked about each imported file (another
	// program's) that does not load: true skips the file (its servers are
	// left out, Config.Skipped and a warning say why) instead of failing
	// the load. The daemon skips every broken import at start, when it
	// has no configuration to keep running, and at a reload only those it
	// skipped already, so that a half-saved file still keeps the running
	// configuration. nil fails the load, as for mcpgw's own file.
	SkipBroken func(path string) bool
}

func (o *LoadOptions) skipBroken(path string) bool {
	return o != nil && o.SkipBroken != nil && o.SkipBroken(path)
}

func (o *LoadOptions) lookup() func(string) (string, bool) {
	if o != nil && o.Getenv != nil {
		return func(k string) (string, bool) {
			v := o.Getenv(k)
			return v, v != ""
		}
	}
	return os.LookupEnv
}

func (o *LoadOptions) home() string {
	if o != nil && o.Home != "" {
		return o.Home
	}
	h, _ := os.UserHomeDir()
	return h
}

// DefaultConfigPath returns $XDG_CONFIG_HOME/mcpgw/mcp.json, or
// ~/.config/mcpgw/mcp.json when XDG_CONFIG_HOME is unset or not absolute.
func DefaultConfigPath() string { return defaultConfigPath(nil) }

func defaultConfigPath(opts *LoadOptions) string {
	dir, _ := opts.lookup()("XDG_CONFIG_HOME")
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(opts.home(), ".config")
	}
	return filepath.Join(dir, "mcpgw", "mcp.json")
}

// Load reads, interpolates and validates the config file at path ("" means
// DefaultConfigPath). A missing file is not an error: the result is an
// empty Config with Missing set. An invalid file gives an error naming the
// file and, for each problem, the field:
//
//	/home/u/.config/mcpgw/mcp.json: servers.github.lifecycle: "lazzy" is not one of ...
//	/home/u/.config/mcpgw/mcp.json:3:14: invalid character '}' after object name
//
// Several problems are joined with errors.Join, in file order; each wraps a
// *ValidationError.
func Load(path string, opts *LoadOptions) (*Config, error) {
	if path == "" {
		path = defaultConfigPath(opts)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	data, err := readConfigFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		cfg := &Config{
			Path:     path,
			Servers:  map[string]*Server{},
			Settings: defaultSettings(),
			Files:    []string{path},
			Hash:     hashFiles([]string{path}, [][]byte{nil}),
			Missing:  true,
		}
		if err := resolveSources(cfg, opts); err != nil {
			return nil, err
		}
		return cfg, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return Parse(data, path, opts)
}

// Empty is the configuration a daemon runs while its file at path does not
// load: no servers, default settings, path watched. Its Hash matches no
// loaded file's, so the first good load replaces it.
func Empty(path string) *Config {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return &Config{
		Path:     path,
		Servers:  map[string]*Server{},
		Settings: defaultSettings(),
		Files:    []string{path},
		Trust:    &TrustStore{},
	}
}

// Parse is Load for config bytes already read; file names them in errors,
// in Server.Source, and anchors relative paths (cwd, cachePath).
func Parse(data []byte, file string, opts *LoadOptions) (*Config, error) {
	if err := checkDepth(data, maxConfigDepth); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if data == nil {
		data = []byte{} // nil marks a missing file in hashFiles
	}
	cfg := &Config{
		Path:     file,
		Servers:  map[string]*Server{},
		Settings: defaultSettings(),
		Files:    []string{file},
		Hash:     hashFiles([]string{file}, [][]byte{data}),
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if !bytes.HasSuffix(data, []byte("\n")) {
		// hujson wants a line comment to end in a newline, even at the end
		// of the file.
		data = append(bytes.Clone(data), '\n')
	}
	root, err := hujson.Parse(data)
	if err != nil {
		if onlyComments(data) {
			return cfg, nil
		}
		return nil, syntaxError(file, err)
	}
	p := &configParser{
		file:      file,
		dir:       filepath.Dir(file),
		lookup:    withoutOwnVars(opts.lookup()),
		ownLookup: opts.lookup(),
		home:      opts.home(),
	}
	p.data = data // errors say line and column
	p.config(&root, cfg)
	if err := p.errors(file); err != nil {
		return nil, err
	}
	cfg.Warnings = p.warnings()
	if err := resolveSources(cfg, opts); err != nil {
		return nil, err
	}
	return cfg, nil
}

func defaultSettings() Settings {
	return Settings{
		ToolPrefix:         PrefixServer,
		IdleTimeout:        DefaultIdleTimeout,
		CacheMaxAge:        DefaultCacheMaxAge,
		Mode:               ModeProxy,
		DiscoveryTimeout:   DefaultDiscoveryTimeout,
		SessionIdleTimeout: DefaultSessionIdleTimeout,
	}
}

// onlyComments reports whether data holds nothing but whitespace and
// comments, which pi-mcp-adapter reads as no config at all.
func onlyComments(data []byte) bool {
	v, err := hujson.Parse(append(bytes.Clone(data), "\nnull"...))
	return err == nil && v.Value.Kind() == 'n'
}

var hujsonErrorRE = regexp.MustCompile(`^hujson: line (\d+), column (\d+): (.*)$`)

// syntaxError turns a hujson error into "file:line:col: reason".
func syntaxError(file string, err error) error {
	m := hujsonErrorRE.FindStringSubmatch(err.Error())
	if m == nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	reason := m[3]
	if strings.HasSuffix(reason, "unexpected EOF") {
		reason = "unexpected end of file"
	}
	return fmt.Errorf("%s:%s:%s: %s", file, m[1], m[2], reason)
}

// hashFiles hashes every contributing file: its name and its bytes (a nil
// data entry marks a missing file).
func hashFiles(files []string, data [][]byte) string {
	h := sha256.New()
	var n [8]byte
	for i, f := range files {
		h.Write([]byte(f))
		h.Write([]byte{0})
		if data[i] == nil {
			h.Write([]byte("missing"))
			continue
		}
		binary.BigEndian.PutUint64(n[:], uint64(len(data[i])))
		h.Write(n[:])
		h.Write(data[i])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Fields mcpgw reads, and fields pi-mcp-adapter defines that mcpgw ignores
// (a warning each, no "unknown field" suggestion).
var (
	topFields        = []string{"mcpServers", "mcp-servers", "imports", "settings", "team"}
	topFieldsForeign = []string{"claudePlugins"}

	serverFields = []string{
		"command", "args", "env", "cwd", "url", "headers", "auth", "bearerToken",
		"bearerTokenEnv", "enabled", "disabled", "lifecycle", "idleTimeout",
		"requestTimeoutMs", "startupTimeoutMs", "exposeResources", "includeTools",
		"excludeTools", "toolPrefix", "description", "directTools", "isolation", "oauth", "maxConcurrency",
		"approveTools", "autoApprove", "inheritEnv", "searchKeywords",
		"visibleTo", "approveToolsFor", "tokenExchange",
	}
	serverFieldsForeign = []string{
		"socket", "caFile", "requestHeadersCommand", "bearerTokenStore",
		"debug", "trace", "httpTransport",
		"pluginDataDir", "literalEnv", "protocolVersion", "tasks", "type",
	}

	settingsFields = []string{
		"toolPrefix", "idleTimeout", "cachePath", "cacheMaxAge", "mode",
		"requestTimeoutMs", "startupTimeoutMs", "directTools", "maxOutputBytes",
		"discoveryTimeoutMs", "sessionIdleTimeout", "oauthCredentialStore",
		"approveTools", "excludeTools", "approvalTimeoutMs", "inheritEnv", "audit",
		"scripts", "scriptTimeoutMs", "savedResultsMaxAge", "savedResultsMaxBytes",
		"auditMaxBytes", "auditFiles",
		"scriptsPerSession", "scriptsPerDaemon", "scriptArgsBytes", "scriptResultsBytes",
		"approvalsPerSession", "approvalsPerDaemon", "approveToolsFor",
	}
	settingsFieldsForeign = []string{
		"showStatusIcon", "mcpFooterStatus", "notifyOnStartupConnect",
		"hostConfigDiscovery", "ancestorConfigRoots", "agentPluginPaths",
		"namespaceProxyTools", "strictDirectToolArguments", "directToolResultDetails",
		"warnOnLargeDirectTools", "scriptMode", "jev", "toolResultRendering",
		"collapsedResultLines", "disableProxyTool", "freezeDirectTools",
		"autoAuth", "sampling", "samplingAutoApprove", "elicitation", "outputGuard",
		"trace", "authRequiredMessage", "oauthCredentialStore", "oauthDir",
	}

	prefixModes = []string{PrefixServer, PrefixShort, PrefixNone, PrefixMCP}
)

// lifecycleLazyKeepAlive is pi-mcp-adapter's "connect on first use, then
// stay connected": Load maps it to LifecycleLazy with no idle close.
const lifecycleLazyKeepAlive = "lazy-keep-alive"

type configParser struct {
	configChecker
	file   string
	dir    string // directory of file: anchors relative paths
	lookup func(string) (string, bool)
	// ownLookup reads mcpgw's own variables too: for team.credentialKey
	// alone, which no upstream receives.
	ownLookup func(string) (string, bool)
	home      string
	// teamRules are the visibleTo and approveToolsFor values read
	// (checkTeamRules).
	teamRules []teamRule
	// sharedOnly are the oauth members a server reached with each user's
	// own login must not have (checkUserLogins).
	sharedOnly []oauthMember
}

func (p *configParser) config(root *hujson.Value, cfg *Config) {
	obj, ok := root.Value.(*hujson.Object)
	if !ok {
		p.failf(root, "", "top-level value must be an object, got %s", jsonKindName(root))
		return
	}
	var servers, altServers, settings *jsonMember
	var teamV *hujson.Value
	for _, m := range p.members(obj, "") {
		switch m.name {
		case "$schema":
		case "mcpServers":
			servers = &m
		case "mcp-servers":
			altServers = &m
		case "settings":
			settings = &m
		case "imports":
			if list, ok := p.stringList(m.value, "imports"); ok {
				cfg.Imports = list
			}
		case "team":
			p.team(m.value, cfg)
			teamV = m.value
		default:
			p.unknownField(m, joinField("", m.name), topFields, topFieldsForeign)
		}
	}
	if servers == nil {
		servers = altServers
	} else if altServers != nil {
		p.warnf(altServers.key, "mcp-servers", "ignored because mcpServers is also set")
	}
	// Settings first: servers inherit from them.
	if settings != nil {
		p.settings(settings.value, &cfg.Settings)
	}
	if servers != nil {
		p.servers(servers, cfg)
	}
	p.checkTeamRules(cfg)
	p.checkUserLogins(cfg, teamV)
}

func (p *configParser) settings(v *hujson.Value, s *Settings) {
	if jsonIsNull(v) {
		return
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		p.failf(v, "settings", "must be an object, got %s", jsonKindName(v))
		return
	}
	for _, m := range p.members(obj, "settings") {
		f := joinField("settings", m.name)
		switch m.name {
		case "toolPrefix":
			if x, ok := p.str(m.value, f); ok && p.oneOf(m.value, f, x, prefixModes...) {
				s.ToolPrefix = x
			}
		case "idleTimeout":
			if d, ok := p.duration(m.value, f, time.Minute); ok {
				s.IdleTimeout = d
			}
		case "oauthCredentialStore":
			if x, ok := p.str(m.value, f); ok && p.oneOf(m.value, f, x, CredentialStoreFile, CredentialStoreKeyring) {
				s.OAuthCredentialStore = x
			}
		case "cachePath":
			if x, ok := p.str(m.value, f); ok && x != "" {
				s.CachePath = p.absPath(expandHome(x, p.home))
			}
		case "cacheMaxAge":
			if d, ok := p.duration(m.value, f, time.Minute); ok {
				s.CacheMaxAge = d
			}
		case "mode":
			if x, ok := p.str(m.value, f); ok && p.oneOf(m.value, f, x, string(ModeProxy), string(ModeToolSearch), string(ModeDirect)) {
				s.Mode = Mode(x)
			}
		case "requestTimeoutMs":
			if d, ok := p.duration(m.value, f, time.Millisecond); ok {
				s.RequestTimeout = d
			}
		case "startupTimeoutMs":
			if d, ok := p.duration(m.value, f, time.Millisecond); ok {
				s.StartupTimeout = d
			}
		case "directTools":
			s.DirectTools = p.directTools(m.value, f)
		case "discoveryTimeoutMs":
			if d, ok := p.duration(m.value, f, time.Millisecond); ok {
				s.DiscoveryTimeout = d
			}
		case "sessionIdleTimeout":
			if d, ok := p.duration(m.value, f, time.Minute); ok {
				s.SessionIdleTimeout = d
			}
		case "maxOutputBytes":
			if n, ok := p.number(m.value, f, " of bytes"); ok {
				s.MaxOutputBytes = int(n)
				if n == 0 {
					s.MaxOutputBytes = -1 // 0 in the file: no limit
				}
			}
		case "approveTools":
			s.ApproveTools = p.approval(m.value, f)
		case "approveToolsFor":
			s.ApproveToolsFor = p.approveToolsFor(m.value, f)
		case "excludeTools":
			s.ExcludeTools = p.globs(m.value, f)
		case "approvalTimeoutMs":
			if d, ok := p.duration(m.value, f, time.Millisecond); ok {
				s.ApprovalTimeout = d
			}
		case "inheritEnv":
			if b, ok := p.boolean(m.value, f); ok {
				s.InheritEnv = &b
			}
		case "audit":
			if b, ok := p.boolean(m.value, f); ok {
				s.Audit = &b
			}
		case "auditMaxBytes":
			if n, ok := p.number(m.value, f, " of bytes"); ok {
				s.AuditMaxBytes = int64(n)
			}
		case "auditFiles":
			if n, ok := p.number(m.value, f, " of files"); ok {
				s.AuditFiles = int(n)
			}
		case "scripts":
			if b, ok := p.boolean(m.value, f); ok {
				s.Scripts = &b
			}
		case "savedResultsMaxAge":
			if d, ok := p.duration(m.value, f, time.Minute); ok {
				s.SavedResultsMaxAge = d
			}
		case "savedResultsMaxBytes":
			if n, ok := p.number(m.value, f, " of bytes"); ok {
				s.SavedResultsMaxBytes = int64(n)
			}
		case "scriptTimeoutMs":
			if d, ok := p.duration(m.value, f, time.Millisecond); ok {
				s.ScriptTimeout = d
			}
		case "scriptsPerSession":
			p.limit(m.value, f, "", &s.ScriptsPerSession)
		case "scriptsPerDaemon":
			p.limit(m.value, f, "", &s.ScriptsPerDaemon)
		case "scriptArgsBytes":
			p.limit(m.value, f, " of bytes", &s.ScriptArgsBytes)
		case "scriptResultsBytes":
			p.limit(m.value, f, " of bytes", &s.ScriptResultsBytes)
		case "approvalsPerSession":
			p.limit(m.value, f, "", &s.ApprovalsPerSession)
		case "approvalsPerDaemon":
			p.limit(m.value, f, "", &s.ApprovalsPerDaemon)
		default:
			p.unknownField(m, f, settingsFields, settingsFieldsForeign)
		}
	}
}

// directTools reads true (every tool: ["*"]), false (none: empty, non-nil)
// or a list of names. pi-mcp-adapter's "search" is not supported.
func (p *configParser) directTools(v *hujson.Value, field string) []string {
	switch v.Value.Kind() {
	case 'n':
		return nil
	case 't':
		return []string{"*"}
	case 'f':
		return []string{}
	case '"':
		if s := hujsonString(*v); s == "search" {
			p.warnf(v, field, `"search" is not supported by mcpgw; ignored`)
			return nil
		}
	case '[':
		list, _ := p.stringList(v, field)
		return list
	}
	p.failf(v, field, "must be true, false or an array of tool names, %s", jsonGot(v, false))
	return nil
}

// servers reads mcpServers (or mcp-servers). Server fields are named
// KEY.NAME.FIELD in messages, with the key the file uses.
func (p *configParser) servers(sm *jsonMember, cfg *Config) {
	v := sm.value
	if jsonIsNull(v) {
		return
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		p.failf(v, sm.name, "must be an object, got %s", jsonKindName(v))
		return
	}
	for _, m := range p.members(obj, sm.name) {
		f := joinField(sm.name, m.name)
		if strings.TrimSpace(m.name) == "" {
			p.failf(m.key, f, "name must not be empty")
			continue
		}
		if !isPlainName(m.name) {
			p.warnf(m.key, f, "name has characters outside [A-Za-z0-9_-]; its tools are prefixed %q", serverPrefix(PrefixServer, m.name))
		}
		if s := p.server(m, f, &cfg.Settings); s != nil {
			cfg.Servers[m.name] = s
		}
	}
}

// interpolate interpolates s, warning about unset variables.
func (p *configParser) interpolate(v *hujson.Value, field, s string) string {
	return p.interpolateWith(interpolate, v, field, s)
}

// interpolateSecret is interpolate for env, header and bearer token values.
func (p *configParser) interpolateSecret(v *hujson.Value, field, s string) string {
	return p.interpolateWith(interpolateSecret, v, field, s)
}

func (p *configParser) interpolateWith(f func(string, func(string) (string, bool), *[]string) string, v *hujson.Value, field, s string) string {
	var missing []string
	s = f(s, p.lookup, &missing)
	for _, name := range missing {
		if IsOwnVar(name) {
			p.warnf(v, field, "%s is mcpgw's own variable, never given to an upstream; using \"\"", name)
			continue
		}
		p.warnf(v, field, "environment variable %s is not set; using \"\"", name)
	}
	return s
}

// secrets interpolates env or headers values.
func (p *configParser) secrets(v *hujson.Value, field string, raw map[string]string) map[string]string {
	vals := make(map[string]string, len(raw))
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		vals[k] = p.interpolateSecret(v, joinField(field, k), raw[k])
	}
	return vals
}

// url interpolates and checks a server URL: http or https, with a host.
// Errors quote the URL as written, not as interpolated, so that secrets
// from the environment stay out of logs.
func (p *configParser) url(v *hujson.Value, field, raw string) string {
	if i := strings.Index(raw, "://"); i >= 0 && !isURLScheme(raw[:i]) {
		p.fail(v, field, raw, &neturl.Error{Op: "parse", URL: raw, Err: errors.New("invalid URL scheme")})
		return ""
	}
	var missing []string
	s := interpolate(raw, p.lookup, &missing)
	if i := slices.IndexFunc(missing, IsOwnVar); i >= 0 {
		p.fail(v, field, raw, fmt.Errorf("%s is mcpgw's own variable, never given to an upstream", missing[i]))
		return ""
	}
	switch len(missing) {
	case 0:
	case 1:
		p.fail(v, field, raw, fmt.Errorf("environment variable %s is not set", missing[0]))
		return ""
	default:
		p.fail(v, field, raw, fmt.Errorf("environment variables %s are not set", strings.Join(missing, ", ")))
		return ""
	}
	u, err := neturl.Parse(s)
	if err != nil {
		if ue, ok := err.(*neturl.Error); ok {
			err = &neturl.Error{Op: ue.Op, URL: raw, Err: ue.Err}
		}
		p.fail(v, field, raw, err)
		return ""
	}
	switch {
	case u.Scheme == "":
		p.fail(v, field, raw, fmt.Errorf("%q has no scheme; want http:// or https://", raw))
	case u.Scheme != "http" && u.Scheme != "https":
		p.fail(v, field, raw, fmt.Errorf("%q: scheme %q is not http or https", raw, u.Scheme))
	case u.Host == "":
		p.fail(v, field, raw, fmt.Errorf("%q has no host", raw))
	default:
		return s
	}
	return ""
}

// isURLScheme reports whether s is a URL scheme as RFC 3986 defines it:
// ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ). Interpolated schemes
// ("${SCHEME}") are let through for url to check after interpolation.
func isURLScheme(s string) bool {
	if strings.ContainsAny(s, "${") {
		return true
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// absPath anchors a relative path at the config file's directory.
func (p *configParser) absPath(s string) string {
	if s == "" || filepath.IsAbs(s) {
		return s
	}
	return filepath.Join(p.dir, s)
}
