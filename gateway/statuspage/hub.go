package statuspage

import (
	"context"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/registry"
)

// Hub is the daemon as the status page and `mcpgw status` see it: facts,
// read as snapshots of plain data, and the actions the page asks for. The
// page asks; it shapes, sorts and words what it shows itself (Report,
// the page's Data), so the hub gives facts, never sentences.
//
// Concurrency: the page serves each request on a goroutine of its own, so
// any method may be called concurrently with any other, and with itself.
// What a method returns belongs to the caller: the hub keeps no reference
// to it and never changes it. The facts (Daemon, Servers, Tools, Log,
// Stderr, Sessions, Search, Approvals) take the hub's locks briefly and
// never wait on an upstream or the network. Reconnect and Login wait for
// an upstream or an authorization server until it answers or ctx ends;
// SetEnabled, Trust and Refuse apply the configuration again before they
// return, which reads files and may wait for a changed server's process
// to stop; Decide returns at once.
//
// An action's error that is the caller's (nothing to decide, no trust
// store, logged in already) is an *Error, with the HTTP status to answer;
// any other error is a failure.
type Hub interface {
	// Daemon is what the daemon says of itself, to the user ctx carries
	// (in team mode, identity.FromContext; their scripts only).
	Daemon(ctx context.Context) DaemonFacts
	// Servers are the configured servers, in the catalogue's order: in
	// team mode, those the user ctx carries sees (a server whose
	// visibleTo leaves them out is not among them, and every method below
	// that names it answers as for a server the hub does not know).
	Servers(ctx context.Context) []ServerFacts
	// Tools are the tools server offers, in the catalogue's order; nil
	// for a server the hub does not know.
	Tools(ctx context.Context, server string) []ToolFacts
	// Log is the daemon's lines about name (a server, or an upstream
	// shared by several), oldest first, each starting with its time of day
	// (time.TimeOnly). The page asks only about servers Servers gave.
	Log(name string) []string
	// Stderr is the last n lines server's process wrote to stderr; nil for
	// a server that is off (disabled or untrusted).
	Stderr(ctx context.Context, server string, n int) []string
	// Sessions are the live downstream sessions: in team mode, those of
	// the user ctx carries.
	Sessions(ctx context.Context) []SessionFacts
	// Search ranks the tools for query as the model's search does, best
	// first, at most limit: the tools of the servers Servers gives.
	Search(ctx context.Context, query string, limit int) []Hit
	// Approvals are the calls waiting for the decision of the user ctx
	// carries (in team mode; everyone's else).
	Approvals(ctx context.Context) []api.PendingApproval

	// Reconnect connects server now, or again.
	Reconnect(ctx context.Context, server string) error
	// SetEnabled turns server on or off until the daemon stops.
	SetEnabled(ctx context.Context, server string, on bool) error
	// Trust trusts dir, a project directory (its servers may start), as
	// `mcpgw trust` does; the answer is the trust store's.
	Trust(dir string) (string, error)
	// Refuse hides dir from the projects waiting for trust until the
	// daemon stops; its servers do not start.
	Refuse(dir string)
	// Login starts (or joins) the OAuth login of server and returns the
	// authorization URL to send the browser to.
	Login(ctx context.Context, server string) (authURL string, err error)
	// Decide makes a pending approval's decision: once, tool, server or
	// deny; by is "page" or "cli". In team mode another user's call is
	// not found.
	Decide(ctx context.Context, id, decision, by string) (api.PendingApproval, error)
}

// DaemonFacts are the daemon's own facts.
type DaemonFacts struct {
	Version   string
	PID       int
	StartedAt time.Time
	Config    string // the config file
	Cache     string // the metadata cache file; "" for none
	// HTTP is the address the HTTP listener serves, "" for none;
	// HTTPError why the one asked for is not served.
	HTTP, HTTPError string
	LastReload      *api.ReloadInfo
	Warnings        []string // the config's
	Sessions        int      // live downstream sessions
	Scripts         []api.ScriptReport
}

// ServerFacts are one configured server's facts.
type ServerFacts struct {
	Name      string
	Source    string // the file that defines it
	Line      int    // the line of its entry in Source; 0 when not known
	Lifecycle string
	Remote    bool // reached over HTTP, not a process
	OAuth     bool // "auth": "oauth"
	Enabled   bool
	Untrusted bool // from a project not trusted: never started
	// DisabledHere: turned off with SetEnabled until the daemon stops.
	DisabledHere bool
	Policy       []registry.PolicyItem
	// Tools and Resources count what it offers: its tools (less excluded
	// ones) and its resources, whose readers are not counted as tools.
	Tools, Resources int
	// Listing is where what is known of its tools came from
	// (registry.SourceLive, SourceCache, SourcePrevious); "" for nothing.
	Listing string
	P50     time.Duration // the median of its recent calls; 0 for none
	Login   LoginFacts    // an OAuth server's stored login
	// Upstream is its connection's state; nil while it is off.
	Upstream *UpstreamFacts
	// PerUser: it runs an upstream per user (team mode), beside Upstream;
	// UserUpstreams of them are connected, and Yours is the one of the
	// user the facts were asked for (nil: none yet).
	PerUser       bool
	UserUpstreams int
	Yours         *UpstreamFacts
}

// LoginFacts describe a stored OAuth login, never its tokens.
type LoginFacts struct {
	Token       bool      // an access token is stored
	Expiry      time.Time // when it expires; zero for never or unknown
	Refreshable bool      // a refresh token or a client-credentials grant renews it
}

// UpstreamFacts are the state of a server's connection.
type UpstreamFacts struct {
	// Name is the name its logs and metrics use: the first of the
	// configured names that share it; Aliases are the others.
	Name    string
	Aliases []string
	// State is connected, connecting, failed or needs-auth; anything else
	// is not connected now.
	State     string
	Since     time.Time // when State was entered
	NextRetry time.Time // while backing off
	LastError string
	PID       int
	// Calls and Errors count its requests under every name; ByName by the
	// configured name each came by.
	Calls, Errors int64
	ByName        map[string]Counts
}

// Counts are the requests made under one name.
type Counts struct{ Calls, Errors int64 }

// ToolFacts are one tool as the model sees it.
type ToolFacts struct {
	Name        string
	Description string
	Params      string // its parameters as one line of TypeScript
}

// SessionFacts are one live downstream session's facts.
type SessionFacts struct {
	ClientName, ClientVersion string // from initialize
	User                      string // who opened it, in team mode
	// Protocol is the MCP version it speaks: what its client negotiated,
	// or, for an HTTP conversation of 2026-07-28 (HTTP true), the version
	// its requests name; "" before its first request.
	Protocol   string
	HTTP       bool // it has an MCP HTTP session
	Shim       bool // it came through the shim's socket (mcpgw stdio)
	LastActive time.Time
	Mode       string
	Dir        string   // its working directory, as given
	Activated  int      // tools ToolSearch activated
	Servers    []string // the servers it called
	// Project is its project directory when the project's files define
	// servers that wait for trust; nil otherwise.
	Project *ProjectFacts
}

// ProjectFacts are a project directory of a session and the servers its
// files define that wait for trust.
type ProjectFacts struct {
	Dir     string // absolute
	Refused bool   // refused (Hub.Refuse) until the daemon stops
	Servers []ProjectServer
}

// Hit is one search result and why it ranked.
type Hit struct {
	Tool        string
	Description string
	Score       float64
	Why         string
}
