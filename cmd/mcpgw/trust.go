package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

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
	dir := fs.Arg(0)
	if by := ts.TrustedBy(dir); by != "" {
		fmt.Fprintf(stdout, "%s is already trusted (through %s)\n", dir, by)
		return nil
	}
	if _, err := ts.Add(dir); err != nil {
		return fmt.Errorf("trusting %s: %w", dir, err)
	}
	if err := ts.Save(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "trusted %s: its project MCP servers may now start (store %s)\n", ts.TrustedBy(dir), ts.Path())
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
	dir := fs.Arg(0)
	if !ts.Remove(dir) {
		if by := ts.TrustedBy(dir); by != "" {
			return fmt.Errorf("%s is not trusted itself but through %s; run: mcpgw untrust %s", dir, by, by)
		}
		abs, _ := filepath.Abs(dir)
		fmt.Fprintf(stdout, "%s was not trusted\n", abs)
		return nil
	}
	if err := ts.Save(); err != nil {
		return err
	}
	if by := ts.TrustedBy(dir); by != "" {
		fmt.Fprintf(stdout, "untrusted %s, but it is still trusted through %s\n", dir, by)
		return nil
	}
	fmt.Fprintf(stdout, "untrusted %s: its project MCP servers no longer start\n", dir)
	return nil
}
