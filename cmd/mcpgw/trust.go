package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/mcpgw/mcpgw/registry"
)

// trustCmd is `mcpgw trust DIR` and `mcpgw trust --list`: project files
// (.pi/mcp.json, .mcp.json, ...) in DIR and below may start servers. The
// daemon watches the trust store, so sessions there see the project's
// servers without a restart.
func trustCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("trust", stderr)
	list := fs.Bool("list", false, "list the trusted directories")
	file := fs.String("trust-file", registry.DefaultTrustPath(), "trust store")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ts, err := registry.LoadTrust(*file)
	if err != nil {
		return err
	}
	if *list {
		if fs.NArg() > 0 {
			return errors.New("usage: mcpgw trust --list")
		}
		for _, d := range ts.Dirs() {
			fmt.Fprintln(stdout, d)
		}
		return nil
	}
	if fs.NArg() != 1 {
		return errors.New("usage: mcpgw trust DIR (or --list)")
	}
	msg, err := ts.Trust(fs.Arg(0))
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, msg)
	return nil
}

// untrustCmd is `mcpgw untrust DIR`.
func untrustCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("untrust", stderr)
	file := fs.String("trust-file", registry.DefaultTrustPath(), "trust store")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: mcpgw untrust DIR")
	}
	ts, err := registry.LoadTrust(*file)
	if err != nil {
		return err
	}
	msg, err := ts.Untrust(fs.Arg(0))
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, msg)
	return nil
}
