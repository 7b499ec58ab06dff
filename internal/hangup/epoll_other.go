//go:build !linux

package hangup

import "syscall"

func watchRaw(syscall.RawConn, bool, func()) (func(), bool) { return nil, false }
