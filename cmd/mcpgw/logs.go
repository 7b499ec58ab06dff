package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpgw/mcpgw/deploy"
)

// logsCmd is `mcpgw logs SERVER [-f]`: the daemon's recent lines about a
// server and the server's own stderr, as the status page shows them.
func logsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("logs", stderr)
	var c clientFlags
	c.register(fs)
	follow := fs.Bool("f", false, "keep printing new lines")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: mcpgw logs [-f] SERVER")
	}
	ctl, err := c.control()
	if err != nil {
		return err
	}
	return printLogs(ctx, ctl, stdout, fs.Arg(0), *follow)
}

// uiCmd is `mcpgw ui`: the status page's address, opened in the browser.
func uiCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("ui", stderr)
	var c clientFlags
	c.register(fs)
	noOpen := fs.Bool("no-open", false, "only print the address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	u := strings.TrimRight(c.url, "/") + "/"
	fmt.Fprintln(stdout, u)
	if !*noOpen {
		if err := deploy.OpenBrowser(u); err != nil {
			fmt.Fprintf(stderr, "could not open a browser: %v\n", err)
		}
	}
	return nil
}
