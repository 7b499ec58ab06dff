//go:build unix && !linux

package main

import (
	"errors"
)

// The test binary's helper modes whose tests run on Linux only (they
// drive the conformance suite's client side and a browser).
var errLinuxOnly = errors.New("only on Linux")

func conformanceClientMain(string) error { return errLinuxOnly }
func conformanceCLIMain(string) error    { return errLinuxOnly }
func browseMain(string) error            { return errLinuxOnly }
