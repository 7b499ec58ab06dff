package upstream

import (
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// State is an upstream's connection state.
type State string

// States of an upstream.
const (
	StateIdle       State = "idle"       // not connected (never, or closed when idle)
	StateConnecting State = "connecting" // a connect is in progress
	StateConnected  State = "connected"
	StateFailed     State = "failed"     // the last connect failed, or the connection was lost
	StateNeedsAuth  State = "needs-auth" // the upstream answered 401; not retried until Connect
	StateClosed     State = "closed"     // removed from the configuration or pool closed
)

// states lists every State, for metrics.
var states = []State{StateIdle, StateConnecting, StateConnected, StateFailed, StateNeedsAuth, StateClosed}

// Status describes one upstream at a point in time.
type Status struct {
	Name, Hash string
	// Aliases are the other configured names of the same identity, sorted.
	// Metrics and logs use Name only.
	Aliases   []string
	State     State
	Since     time.Time // when State was entered
	LastError string    // the last connect or connection error ("" after a successful connect)
	NextRetry time.Time // while backing off: when the next connect may be tried
	Calls     int64     // tool calls and resource reads
	Errors    int64     // of those, how many failed (an IsError result is not a failure)
	// ByName splits Calls and Errors by the configured name each request
	// came by (WithName; the upstream's own name when it named none).
	ByName     map[string]Counts
	InFlight   int
	PID        int // stdio: the server's process ID while connected
	Tools      int // tools in the last snapshot
	Connects   int // successful connects
	IdleCloses int
}

// Counts are an upstream's requests under one name.
type Counts struct {
	Calls, Errors int64
}

// Snapshot is what an upstream offered at its last successful listing.
// A Snapshot is never modified after it is published.
type Snapshot struct {
	Tools           []*mcp.Tool
	Resources       []*mcp.Resource
	Templates       []*mcp.ResourceTemplate
	Prompts         []*mcp.Prompt
	Instructions    string
	ServerInfo      *mcp.Implementation
	ProtocolVersion string
}
