//go:build unix && !linux

package upstream

import "os"

// pipeUnread is how many bytes written to the pipe f no one has read yet;
// -1 when it cannot tell, as here: FIONREAD on a pipe's writing end does
// not count what waits at the other end on every system.
func pipeUnread(*os.File) int64 { return -1 }
