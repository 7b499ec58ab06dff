// Package registry owns mcpgw's configuration model (files, imports, merge,
// interpolation, validation, watching) and the tool catalogue (naming,
// include/exclude, lookup and search ranking). It never opens a network
// connection or starts a process.
package registry

import "time"

// Lifecycle values of Server.Lifecycle.
const (
	LifecycleLazy      = "lazy"       // connect on first use, close when idle (default)
	LifecycleEager     = "eager"      // connect at start, no idle close unless configured
	LifecycleKeepAlive = "keep-alive" // connect at start, health-checked, reconnected
)

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
	// Files lists every file that contributed (for watching), existing or not.
	Files []string
	// Hash is a content hash of everything that contributed; equal hashes
	// mean nothing changed.
	Hash string
	// Warnings are problems that do not stop the config from loading:
	// unknown or unsupported fields, unset environment variables, ignored
	// values. Each starts with the field, e.g.
	// `servers.github.comand: unknown field (did you mean "command"?)`.
	Warnings []string
}

// Settings are the global "settings" block of the config file.
type Settings struct {
	ToolPrefix     string        // PrefixServer (default), PrefixShort or PrefixNone
	IdleTimeout    time.Duration // default idle close for lazy servers; 10 min default; 0 = never
	CachePath      string        // metadata cache file; "" = default (~/.pi/agent/mcp-cache.json)
	CacheMaxAge    time.Duration // cache entry validity; default 7 days
	Mode           string        // downstream mode: proxy (default), toolsearch, direct
	RequestTimeout time.Duration // default per-call timeout; 0 = default (2 min)
	StartupTimeout time.Duration // default connect timeout; 0 = default (60 s)
	DirectTools    []string      // MCP_DIRECT_TOOLS-style spec from settings, if any
}

// Server is one upstream MCP server definition after interpolation.
// Exactly one of Command and URL is set.
type Server struct {
	Name string `json:"-"`

	// Identity fields: they make up the identity hash (see Hash).
	Command         string            `json:"command,omitempty"`
	Args            []string          `json:"args,omitempty"`
	Env             map[string]string `json:"env,omitempty"`
	Cwd             string            `json:"cwd,omitempty"`
	URL             string            `json:"url,omitempty"`
	Headers         map[string]string `json:"headers,omitempty"`
	Auth            string            `json:"auth,omitempty"`
	BearerToken     string            `json:"bearerToken,omitempty"`
	BearerTokenEnv  string            `json:"bearerTokenEnv,omitempty"`
	ExposeResources *bool             `json:"exposeResources,omitempty"`
	IncludeTools    []string          `json:"includeTools,omitempty"`
	ExcludeTools    []string          `json:"excludeTools,omitempty"`

	// Behaviour fields: changing them does not change the identity.
	Enabled        bool          `json:"-"` // default true
	Lifecycle      string        `json:"-"` // LifecycleLazy (default), LifecycleEager, LifecycleKeepAlive
	IdleTimeout    time.Duration `json:"-"` // resolved: server value, else settings, else 10 min; 0 = never
	RequestTimeout time.Duration `json:"-"` // requestTimeoutMs; 0 = settings default
	StartupTimeout time.Duration `json:"-"` // startupTimeoutMs; 0 = settings default
	ToolPrefix     string        `json:"-"` // overrides Settings.ToolPrefix when set
	Description    string        `json:"-"` // free text (Pi's built-in MCP "description"), used by search
	DirectTools    []string      `json:"-"` // directTools: ["*"] for true, [] for false, names otherwise; nil when unset (settings apply)
	// Source is the file the definition came from.
	Source string `json:"-"`

	// Hash is the identity hash: the cache's configHash. Two servers with the
	// same Hash share one upstream connection.
	Hash string `json:"-"`
}

// ExposesResources reports whether resources become get_<name> tools
// (default true).
func (s *Server) ExposesResources() bool { return s.ExposeResources == nil || *s.ExposeResources }

// IsRemote reports whether the server is reached over HTTP.
func (s *Server) IsRemote() bool { return s.URL != "" }
