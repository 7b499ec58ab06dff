// Package registry owns mcpgw's configuration model (files, imports, merge,
// interpolation, validation, watching) and the tool catalogue (naming,
// include/exclude, lookup and search ranking). It never opens a network
// connection or starts a process.
package registry

import (
	"fmt"
	"strings"
	"time"
)

// Lifecycle values of Server.Lifecycle.
const (
	LifecycleLazy      = "lazy"       // connect on first use, close when idle (default)
	LifecycleEager     = "eager"      // connect at start, no idle close unless configured
	LifecycleKeepAlive = "keep-alive" // connect at start, health-checked, reconnected
)

// Isolation values of Server.Isolation.
const (
	IsolationShared  = "shared"  // one upstream for every session (default)
	IsolationSession = "session" // one upstream per session
	// IsolationUser: in team mode, one upstream per user, shared by that
	// user's sessions (a stdio server's own process; each user's own
	// connection to an HTTP one); shared outside team mode.
	IsolationUser = "user"
)

// DefaultDiscoveryTimeout is how long discovery answers wait for servers
// that are starting: under the 30–60 s request timeouts of common clients,
// over the few seconds an npx server takes on a warm npm cache.
const DefaultDiscoveryTimeout = 10 * time.Second

// DefaultSessionIdleTimeout closes HTTP sessions no client has used for an
// hour; a client that comes back after that re-initializes (404 per spec).
const DefaultSessionIdleTimeout = time.Hour

// DefaultMaxOutputBytes is the default cap on a tool result's text: about
// 64k tokens, more than any model should read in one answer.
const DefaultMaxOutputBytes = 256 << 10

// DefaultApprovalTimeout is how long a call that needs an approval waits
// for one from the status page or `mcpgw approve` when its session cannot
// be asked (settings.approvalTimeoutMs).
const DefaultApprovalTimeout = 2 * time.Minute

// Tool prefix modes of Settings.ToolPrefix and Server.ToolPrefix.
const (
	PrefixServer = "server" // <server>_<tool> (default)
	PrefixShort  = "short"  // <short server name>_<tool>
	PrefixNone   = "none"   // <tool>
	PrefixMCP    = "mcp"    // mcp__<server>_<tool> (pi-mcp-adapter's "mcp" mode)
)

// Config is one fully loaded, interpolated and validated configuration.
// It is immutable once returned by Load: reloads produce a new Config.
type Config struct {
	// Path is the main config file (set even when it does not exist).
	Path string
	// Missing reports that the main config file does not exist; the Config
	// is then empty, with default settings.
	Missing bool
	// Servers by name. Names are unique; see Server.Name.
	Servers map[string]*Server
	// Settings are the global settings, defaults applied.
	Settings Settings
	// Imports as written in the file (e.g. "cursor", "claude-code").
	Imports []string
	// Team is the "team" block (team.go); nil outside team mode. Only
	// mcpgw's own file sets it: imports and project files cannot.
	Team *Team
	// Files lists every file that contributed (for watching), existing or not.
	Files []string
	// Hash is a content hash of everything that contributed; equal hashes
	// mean nothing changed.
	Hash string
	// Warnings are problems that do not stop the config from loading:
	// unknown or unsupported fields, unset environment variables, ignored
	// values. Each starts with the field, e.g.
	// `servers.github.comand: unknown field (did you mean "command"?)`;
	// those about another file than Path start with that file.
	Warnings []string
	// Skipped are the imported files left out because they do not load
	// (see LoadOptions.SkipBroken), each with why.
	Skipped []SkippedFile
	// Trust is the trust store named by LoadOptions.TrustFile, as it was
	// when the Config was loaded (never nil in a Config from Load or Parse;
	// empty when there is none).
	// Pass it to WithProject.
	Trust *TrustStore

	// sources are the files that define servers, in precedence order,
	// and opts the options of the load, kept for WithProject.
	sources []*sourceFile
	opts    *LoadOptions
}

// A SkippedFile is an imported file that did not load and was left out.
type SkippedFile struct {
	Path string
	Err  error // names the file, and the field or the line and column where it can
}

// Warning is the Config's warning about the skipped file.
func (s SkippedFile) Warning() string {
	return fmt.Sprintf("%v; skipped: its servers are left out until it is fixed", s.Err)
}

// Settings are the global "settings" block of the config file.
type Settings struct {
	ToolPrefix     string        // PrefixServer (default), PrefixShort or PrefixNone
	IdleTimeout    time.Duration // default idle close for lazy servers; 10 min default; 0 = never
	CachePath      string        // metadata cache file; "" = default (~/.pi/agent/mcp-cache.json)
	CacheMaxAge    time.Duration // cache entry validity; default 7 days
	Mode           Mode          // downstream mode: proxy (default), toolsearch, direct
	RequestTimeout time.Duration // default per-call timeout; 0 = default (2 min)
	StartupTimeout time.Duration // default connect timeout; 0 = default (60 s)
	DirectTools    []string      // MCP_DIRECT_TOOLS-style spec from settings, if any
	// OAuthCredentialStore is where OAuth logins are kept: "file" (the
	// default: 0600 files under the state directory) or "keyring" (the OS
	// keyring, and nowhere else).
	OAuthCredentialStore string
	// DiscoveryTimeout bounds how long an answer about tools (search, list,
	// ToolSearch, a first tools/list) waits for servers whose tools are not
	// known yet and that are being connected: discoveryTimeoutMs, default
	// DefaultDiscoveryTimeout; 0 means answer at once.
	DiscoveryTimeout time.Duration
	// SessionIdleTimeout closes an HTTP session no request has used for
	// that long (sessionIdleTimeout, in minutes, like idleTimeout); default
	// DefaultSessionIdleTimeout, 0 = never.
	SessionIdleTimeout time.Duration
	// MaxOutputBytes caps the text of one tool result the gateway returns;
	// 0 means the default (DefaultMaxOutputBytes), negative means no cap.
	MaxOutputBytes int
	// Policy (see policy.go): approveTools over the names mcpgw shows,
	// excludeTools (gone from every list, search and call), how long a
	// call waits for an approval nobody can give in the session
	// (approvalTimeoutMs, default DefaultApprovalTimeout), the default of
	// the servers' inheritEnv, and whether calls are audited (audit,
	// default true).
	ApproveTools    Approval
	ExcludeTools    []string
	ApprovalTimeout time.Duration
	InheritEnv      *bool
	Audit           *bool
	// ApproveToolsFor (team mode) adds approvals for some users and groups
	// on every server, as a server's own approveToolsFor does on it (see
	// teampolicy.go); its globs are over the names mcpgw shows, as
	// approveTools' here.
	ApproveToolsFor []PrincipalApproval
	// The audit log rotates past AuditMaxBytes (auditMaxBytes) and keeps
	// AuditFiles files in all (auditFiles); 0: 10 MiB, 10 files. Read at
	// start.
	AuditMaxBytes int64
	AuditFiles    int
	// Scripts turns code mode on or off: the mcp tool's script action and
	// the mcp_script tool. nil (the default): on in proxy and toolsearch
	// modes, off in direct mode, whose tool list is the upstreams' own.
	Scripts *bool
	// ScriptTimeout is a script's default deadline (scriptTimeoutMs); 0
	// means 30 s. A caller may ask for up to 5 minutes.
	ScriptTimeout time.Duration
	// Results cut at MaxOutputBytes are saved whole to files, removed
	// after SavedResultsMaxAge (savedResultsMaxAge, minutes) or, oldest
	// first, past SavedResultsMaxBytes in all; 0: one day, 1 GiB.
	SavedResultsMaxAge   time.Duration
	SavedResultsMaxBytes int64
	// Limits on what sessions make the daemon hold, each enforced before
	// it is taken; 0 means the default (Default*, below).
	Limits
}

// Limits bound what one session, and all of them, can make the daemon
// hold: scripts running (scriptsPerSession, scriptsPerDaemon), the
// arguments a script's calls in flight hold and the results it reads
// (scriptArgsBytes, scriptResultsBytes), and calls waiting for approval
// (approvalsPerSession, approvalsPerDaemon). Zero fields are the
// defaults; Resolved fills them in.
type Limits struct {
	ScriptsPerSession   int
	ScriptsPerDaemon    int
	ScriptArgsBytes     int
	ScriptResultsBytes  int
	ApprovalsPerSession int
	ApprovalsPerDaemon  int
}

// The limits' defaults.
const (
	DefaultScriptsPerSession   = 2
	DefaultScriptsPerDaemon    = 8
	DefaultScriptArgsBytes     = 16 << 20
	DefaultScriptResultsBytes  = 16 << 20
	DefaultApprovalsPerSession = 8
	DefaultApprovalsPerDaemon  = 64
)

// Resolved returns l with every zero field at its default.
func (l Limits) Resolved() Limits {
	def := func(n *int, d int) {
		if *n <= 0 {
			*n = d
		}
	}
	def(&l.ScriptsPerSession, DefaultScriptsPerSession)
	def(&l.ScriptsPerDaemon, DefaultScriptsPerDaemon)
	def(&l.ScriptArgsBytes, DefaultScriptArgsBytes)
	def(&l.ScriptResultsBytes, DefaultScriptResultsBytes)
	def(&l.ApprovalsPerSession, DefaultApprovalsPerSession)
	def(&l.ApprovalsPerDaemon, DefaultApprovalsPerDaemon)
	return l
}

// Server is one upstream MCP server definition after interpolation.
// Exactly one of Command and URL is set.
//
// Server has no JSON form on purpose: Env, Headers and BearerToken hold
// secrets, and nothing should serialise them by accident.
type Server struct {
	Name string

	// Identity fields: they make up the identity hash (see Hash).
	Command         string
	Args            []string
	Env             map[string]string
	Cwd             string
	URL             string
	Headers         map[string]string
	Auth            string
	OAuth           *OAuth // the "oauth" block; nil when absent (Auth "oauth" discovers everything)
	BearerToken     string
	BearerTokenEnv  string
	ExposeResources *bool
	IncludeTools    []string
	ExcludeTools    []string
	// TokenExchange is the "tokenExchange" block (tokenexchange.go); nil
	// when absent. Not in the cache's identity (pi-mcp-adapter has no
	// such field) but mixed into Hash.
	TokenExchange *TokenExchange

	// Behaviour fields: changing them does not change the identity.
	Enabled        bool          // default true
	Lifecycle      string        // LifecycleLazy (default), LifecycleEager, LifecycleKeepAlive
	Isolation      string        // IsolationSession, IsolationUser, or IsolationShared ("" too: the default)
	MaxConcurrency int           // calls in flight at once; 0 = the pool's default
	IdleTimeout    time.Duration // resolved: server value, else settings, else 10 min; 0 = never
	RequestTimeout time.Duration // requestTimeoutMs; 0 = settings default
	StartupTimeout time.Duration // startupTimeoutMs; 0 = settings default
	ToolPrefix     string        // overrides Settings.ToolPrefix when set
	Description    string        // free text (Pi's built-in MCP "description"), used by search
	// SearchKeywords are extra search words by tool name (original or
	// shown) or glob; all matching entries add up (searchKeywords).
	SearchKeywords map[string][]string
	DirectTools    []string // directTools: ["*"] for true, [] for false, names otherwise; nil when unset (settings apply)
	// Policy (see policy.go). ApproveTools unset means settings decide;
	// AutoApprove names tools never asked about (Claude's and Cursor's
	// autoApprove / alwaysAllow); InheritEnv is the server's inheritEnv,
	// else settings', nil for the default (true).
	ApproveTools Approval
	AutoApprove  []string
	InheritEnv   *bool
	// VisibleTo names the only users and groups ("user:NAME",
	// "group:NAME") that see the server in team mode; nil for everyone.
	// ApproveToolsFor adds approvals for some of them. See teampolicy.go.
	VisibleTo       []string
	ApproveToolsFor []PrincipalApproval
	// IncludeAlso are includeTools lists of trusted project entries that
	// narrow this server (see WithProject): a tool is shown only if it
	// matches IncludeTools (when set) and every one of these.
	IncludeAlso [][]string
	// PolicyNotes say where restrictions written in another tool's terms
	// came from, e.g. `toolExposure "delete_*": "hidden" → excludeTools`
	// (for mcpgw check).
	PolicyNotes []string
	// Source is the file the definition came from.
	Source string
	// Line is the line of the server's entry in Source (0: not known).
	Line int
	// Untrusted marks a server from a project directory the user has not
	// trusted (see TrustStore). It is listed so the user can see it, but
	// Enabled is false and it must never be started.
	Untrusted bool

	// SecretCommands allows "!cmd" values in Env, Headers and BearerToken
	// to run (see upstream's secret resolution). It is set for servers from
	// mcpgw's own file, from Pi's (the "pi" import, whose convention it
	// is) and from trusted project files; a "!cmd" anywhere else is
	// refused at connect rather than run.
	SecretCommands bool

	// Hash is the identity hash: the cache's configHash. Two servers with the
	// same Hash share one upstream connection.
	Hash string
}

// ExposesResources reports whether resources become get_<name> tools
// (default true).
func (s *Server) ExposesResources() bool { return s.ExposeResources == nil || *s.ExposeResources }

// IsRemote reports whether the server is reached over HTTP.
func (s *Server) IsRemote() bool { return s.URL != "" }

// RelativeArgs lists the arguments of a stdio server that look like paths
// relative to its working directory ("." or "./x", "../x"). A server with
// no cwd runs in the user's home directory, shared by every session, so
// such a path names a directory under home, not the session's project.
// Servers with a cwd, and project servers (which run in their project),
// return nil.
func (s *Server) RelativeArgs() []string {
	if s.Command == "" || s.Cwd != "" {
		return nil
	}
	var out []string
	for _, a := range s.Args {
		if a == "." || a == ".." || strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") {
			out = append(out, a)
		}
	}
	return out
}
