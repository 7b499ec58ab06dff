//go:build !linux

package transport

// Elsewhere there is no in-flight table (inflight_linux.go): a daemon that
// is killed leaves its piped requests unanswered.
type inFlightTable struct{}

func newInFlightTable() *inFlightTable { return nil }
func (*inFlightTable) add(string)      {}
func (*inFlightTable) remove(string)   {}
func (*inFlightTable) clear()          {}
func (*inFlightTable) close()          {}
func (*inFlightTable) rights() []byte  { return nil }
