//go:build !linux

package main

import (
	"context"
	"errors"
	"io"
)

// benchProxy needs /proc for CPU time, memory and child processes.
func benchProxy(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return errors.New("bench proxy runs on Linux only: it reads the daemon's CPU time, memory and child processes from /proc")
}
