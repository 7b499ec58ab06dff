//go:build !linux

package shim

import (
	"context"
	"io"
	"net"
)

// pump is the Linux pipe's steady state (pump_linux.go); elsewhere the
// goroutine pipe is used.
type pump struct{}

func newPump(*pipe, io.Reader, io.Writer) *pump { return nil }

// clientPipes: the daemon is handed the client's pipes on Linux only.
func clientPipes(io.Reader, io.Writer) ([]int, bool) { return nil, false }

func (*pump) close()                                      {}
func (*pump) run(context.Context, net.Conn, []byte) error { return nil }
func (*pump) flushOut() error                             { return nil }

var errDaemonGone error
