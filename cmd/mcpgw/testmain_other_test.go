//go:build unix && !linux

package main

import (
	"errors"
	"syscall"
)

// The test binary's helper modes whose tests run on Linux only (they
// drive the conformance suite's client side and a browser).
var errLinuxOnly = errors.New("only on Linux")

func conformanceClientMain(string) error { return errLinuxOnly }
func conformanceCLIMain(string) error    { return errLinuxOnly }
func browseMain(string) error            { return errLinuxOnly }

// processAlive reports whether pid exists (a zombie counts, where /proc
// cannot tell).
func processAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }
