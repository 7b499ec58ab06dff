// Package api holds the types of the daemon's control API (GET
// /-/status, /-/approvals): what the daemon reports and what its clients
// — the CLI, the status page's JSON — read. Data only.
package api

import (
	"fmt"
	"time"
)

// Report is the daemon's state as `mcpgw status` shows it (GET /-/status).
type Report struct {
	Version   string    `json:"version"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"startedAt"`
	Config    string    `json:"config"`
	// HTTP is the address the daemon's HTTP listener (/mcp, the page)
	// serves, "" for none; HTTPError says why not, when one was asked for
	// ("127.0.0.1:7332: listen tcp …: address already in use").
	HTTP       string         `json:"http,omitempty"`
	HTTPError  string         `json:"httpError,omitempty"`
	Cache      string         `json:"cache,omitempty"`
	Sessions   int            `json:"sessions"`
	Tools      int            `json:"tools"` // of every server, as ServerReport.Tools
	LastReload *ReloadInfo    `json:"lastReload,omitempty"`
	Servers    []ServerReport `json:"servers"`
	// Warnings are the config's: misspelt and ignored fields, unset
	// variables, fields mcpgw does not act on.
	Warnings []string `json:"warnings,omitempty"`
	// Approvals are the calls waiting for the user's decision.
	Approvals []PendingApproval `json:"approvals,omitempty"`
	// Scripts are the last code-mode scripts run, newest first.
	Scripts []ScriptReport `json:"scripts,omitempty"`
}

// ScriptReport is one code-mode script: who ran it, what it was, and
// every tool call it made.
type ScriptReport struct {
	ID         string       `json:"id"`
	Session    string       `json:"session,omitempty"`
	Client     string       `json:"client,omitempty"`
	User       string       `json:"user,omitempty"` // in team mode
	Started    time.Time    `json:"started"`
	DurationMs float64      `json:"durationMs"`
	Outcome    string       `json:"outcome"` // ok, or why it stopped: exception, syntax, timeout, memory, canceled, stalled
	Error      string       `json:"error,omitempty"`
	Source     string       `json:"source"` // the script, cut at 4 KiB
	Calls      []ScriptCall `json:"calls,omitempty"`
}

// ScriptCall is one tool call of a script.
type ScriptCall struct {
	Tool  string  `json:"tool"`
	OK    bool    `json:"ok"`
	Error string  `json:"error,omitempty"`
	Ms    float64 `json:"ms"`
}

// ReloadInfo is the outcome of the last configuration reload.
type ReloadInfo struct {
	At    time.Time `json:"at"`
	OK    bool      `json:"ok"`
	Error string    `json:"error,omitempty"`
	// NoConfig says no configuration has loaded since the daemon started
	// (its file did not load then, nor since): it serves no servers,
	// rather than the last good configuration.
	NoConfig bool `json:"noConfig,omitempty"`
}

// ServerReport is one configured server in a Report.
type ServerReport struct {
	Name  string `json:"name"`
	State string `json:"state"` // connected, idle-closed, cached, not connected, connecting, failed, needs-auth, disabled, untrusted
	// Tools are the server's tools offered (the ones it lists, less
	// excluded ones); Resources its resources, which the mcp tool also
	// offers as SERVER_read_NAME tools, not counted in Tools.
	Tools     int       `json:"tools"`
	Resources int       `json:"resources,omitempty"`
	Calls     int64     `json:"calls"`
	Errors    int64     `json:"errors"`
	LastError string    `json:"lastError,omitempty"`
	Since     time.Time `json:"since,omitzero"`
	NextRetry time.Time `json:"nextRetry,omitzero"`
	PID       int       `json:"pid,omitempty"`
	Lifecycle string    `json:"lifecycle"`
	Transport string    `json:"transport"` // stdio or http
	Source    string    `json:"source"`    // the file that defines it
	Listing   string    `json:"listing,omitempty"`
	// SharedWith names the other configured servers with the same identity:
	// they run as one upstream, whose metric series carry the first name
	// of Upstream (the one it was created under).
	SharedWith []string `json:"sharedWith,omitempty"`
	// Upstream is the name the shared upstream's logs and metrics use.
	Upstream string `json:"upstream,omitempty"`
	// Login is an OAuth server's login: "none", "logged in", "expired"
	// (a refresh is due), with TokenExpiry when the token has one.
	Login       string    `json:"login,omitempty"`
	TokenExpiry time.Time `json:"tokenExpiry,omitzero"`
	// P50Ms is the median duration of its last 256 calls, in ms.
	P50Ms float64 `json:"p50Ms,omitempty"`
	// Line is the line of its entry in Source.
	Line int `json:"line,omitempty"`
	// DisabledHere: disabled from the status page until the daemon stops.
	DisabledHere bool `json:"disabledHere,omitempty"`
	// Policy says what restricts the server's tools and what environment
	// it gets, a phrase each.
	Policy []string `json:"policy,omitempty"`
	// PerUser: the server runs an upstream per user ("isolation": "user",
	// team mode), beside the shared one the row's state and PID are of
	// (which lists its tools); UserProcesses of them are connected now,
	// and YourState, YourPID and YourError (its last connect error, such
	// as a refused token exchange) are the asking user's own.
	PerUser       bool   `json:"perUser,omitempty"`
	UserProcesses int    `json:"userProcesses,omitempty"`
	YourState     string `json:"yourState,omitempty"`
	YourPID       int    `json:"yourPid,omitempty"`
	YourError     string `json:"yourError,omitempty"`
}

// PendingApproval is a call waiting for a decision from the status page
// or the CLI.
type PendingApproval struct {
	ID      string    `json:"id"`
	Session string    `json:"session"`
	Client  string    `json:"client,omitempty"`
	User    string    `json:"user,omitempty"` // whose call it is, in team mode
	Server  string    `json:"server"`
	Tool    string    `json:"tool"`
	Args    string    `json:"args"` // as the approval form shows them: every value, secret ones masked, long ones cut
	Full    string    `json:"full"` // every value whole, secret ones masked
	Rule    string    `json:"rule"` // the setting that asks for it
	Since   time.Time `json:"since"`
	// Deadline is when the call stops waiting; zero while its session's
	// client is asked (InSession), which has no deadline.
	Deadline  time.Time `json:"deadline,omitzero"`
	InSession bool      `json:"inSession,omitempty"`
}

// Ago says how long before now t was, as mcpgw writes durations
// ("42s", "3m05s", "2h10m", "3d04h"); "-" for the zero time.
func Ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case t.IsZero():
		return "-"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
	}
}

// LoginServer is what a user's `mcpgw login` needs to log in to a server
// of a team daemon that each user logs in to with their own login (GET
// /-/logins/{server}): its URL, and how mcpgw identifies itself to its
// authorization server (the server's "oauth" block). The credentials
// the login gets go back with PUT /-/logins/{server}.
type LoginServer struct {
	Server              string            `json:"server"`
	URL                 string            `json:"url"`
	ClientID            string            `json:"clientId,omitempty"`
	ClientSecret        string            `json:"clientSecret,omitempty"`
	ClientMetadataURL   string            `json:"clientMetadataUrl,omitempty"`
	Scope               string            `json:"scope,omitempty"`
	RedirectURI         string            `json:"redirectUri,omitempty"`
	AuthorizationParams map[string]string `json:"authorizationParams,omitempty"`
	AllowPrivateNetwork bool              `json:"allowPrivateNetwork,omitempty"`
}
