// Package wire is the protocol between the stdio shim (`mcpgw stdio`,
// package shim) and the daemon on its unix socket: the handshake lines,
// the notes the daemon sends a shim whose pipes it serves, and the
// in-flight table a shim answers from when the daemon dies. Both sides
// import it; neither imports the other.
package wire

import "fmt"

// HandshakeProtocol is the version of the shim ↔ daemon handshake. The
// daemon refuses a shim that speaks another one, with a message saying
// which side to restart.
const HandshakeProtocol = 1

// Hello is the one JSON line the stdio shim sends when it connects to the
// daemon's unix socket; everything after it is MCP (newline-delimited
// JSON-RPC), copied byte for byte, unless the daemon takes the client's
// pipes (Pipes): then only PipeNotes follow, from the daemon.
type Hello struct {
	Protocol int    `json:"mcpgw"`
	Version  string `json:"version"`        // the shim's mcpgw version
	Cwd      string `json:"cwd,omitempty"`  // the client's working directory
	Mode     string `json:"mode,omitempty"` // proxy, toolsearch, direct or "" for the default
	// DirectTools is the client's MCP_DIRECT_TOOLS, if set.
	DirectTools string `json:"directTools,omitempty"`
	// ClientPrefix is SessionOptions.ClientPrefix (the shim's
	// --client-prefix); shims that predate it send none.
	ClientPrefix string `json:"clientPrefix,omitempty"`
	// Session identifies the client's session across connections: the
	// daemon keeps the session's state (activated tools) under it, on disk,
	// so that a shim that re-dials after a daemon restart resumes it.
	Session string `json:"session,omitempty"`
	// Resume says this connection continues Session: the shim replays the
	// client's initialize next (or, with Pipes, sends it in Replay).
	Resume bool `json:"resume,omitempty"`
	// Secret, with Resume, is the session's resume secret (Welcome.Secret):
	// only the daemon and the session's shim know it, and without it the
	// daemon starts a fresh session (no grants, no activated tools)
	// rather than resume the one Session names.
	Secret string `json:"secret,omitempty"`
	// Pipes says the message carries the client's stdin and stdout (an
	// SCM_RIGHTS message with the handshake's first bytes): the daemon
	// may read and write them itself, and the shim then only watches the
	// connection (see Welcome.Pipes).
	Pipes bool `json:"pipes,omitempty"`
	// Replay, with Pipes and Resume, are the client's initialize request
	// and initialized notification, as the daemon passed them on
	// (PipeNote.Replay): the daemon replays them, and the client does not
	// see the second answer to initialize.
	Replay []string `json:"replay,omitempty"`
}

// PipeNote is one JSON line the daemon writes to a shim whose pipes it
// serves.
type PipeNote struct {
	// Replay is a line of the client's that a resumed session needs: its
	// initialize request, then its initialized notification.
	Replay string `json:"replay,omitempty"`
	// Done says the client has ended the session; the shim exits.
	Done bool `json:"done,omitempty"`
}

// Welcome is the daemon's one-line answer to Hello.
type Welcome struct {
	OK      bool   `json:"ok"`
	Version string `json:"version"`         // the daemon's mcpgw version
	Error   string `json:"error,omitempty"` // why the connection is refused
	// Pipes says the daemon serves the client's pipes the shim passed: no
	// MCP goes over the connection, only PipeNotes from the daemon.
	Pipes bool `json:"pipes,omitempty"`
	// InFlight says the message carries the in-flight table (Linux, see
	// inflight_linux.go): what the shim answers if the daemon is killed.
	InFlight bool `json:"inFlight,omitempty"`
	// Session and Secret are what the shim resumes the session with from
	// now on (Hello.Session, Hello.Secret). Session differs from the
	// shim's when its ID was not the shim's to use (another session's, or
	// a resume the daemon refused). Daemons that predate them send
	// neither; the shim then keeps its own ID.
	Session string `json:"session,omitempty"`
	Secret  string `json:"secret,omitempty"`
}

// RestartedAnswer is the answer to request id when the daemon went away
// with it in flight.
func RestartedAnswer(id []byte) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":%q}}`+"\n", id, RestartedInFlight)
}

// The in-flight table (the daemon's inflight_linux.go writes it, a shim
// reads it when the daemon dies) is InFlightSlots slots of
// InFlightSlotSize bytes: byte 0 is 1 for a used slot, byte 1 the ID's
// length, then the ID as written (raw JSON). IDs longer than a slot holds
// are not tracked.
const (
	InFlightSlots    = 512
	InFlightSlotSize = 64

	// InFlightTableSize is the size of the in-flight table.
	InFlightTableSize = InFlightSlots * InFlightSlotSize
)

// InFlightIDs returns the IDs of the requests an in-flight table holds.
func InFlightIDs(table []byte) [][]byte {
	var ids [][]byte
	for i := 0; i+InFlightSlotSize <= len(table); i += InFlightSlotSize {
		s := table[i : i+InFlightSlotSize]
		if s[0] == 1 && s[1] > 0 && int(s[1]) <= InFlightSlotSize-2 {
			ids = append(ids, s[2:2+s[1]])
		}
	}
	return ids
}

// RestartedInFlight is the error message of a request in flight when the
// daemon went away.
const RestartedInFlight = "the mcpgw daemon restarted while this request was in flight; it may or may not have taken effect. Later requests work: retry if it is safe."
