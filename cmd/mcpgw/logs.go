package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/gateway"
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
	var last []string
	for {
		lines, err := c.control().Logs(ctx, fs.Arg(0))
		if err != nil {
			return err
		}
		for _, l := range gateway.NewLines(last, lines) {
			fmt.Fprintln(stdout, l)
		}
		last = lines
		if !*follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
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
