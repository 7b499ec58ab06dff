package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/gateway/api"
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
	u, err := c.pageURL(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, u)
	if !*noOpen {
		if err := deploy.OpenBrowser(u); err != nil {
			fmt.Fprintf(stderr, "could not open a browser: %v\n", err)
		}
	}
	return nil
}

// pageURL is the address of the daemon's status page, once the daemon has
// answered: at --url, or where the daemon found through its socket
// listens; an error says why there is none.
func (c *clientFlags) pageURL(ctx context.Context) (string, error) {
	ctl, err := c.control()
	if err != nil {
		return "", err
	}
	body, err := ctl.Status(ctx)
	if err != nil {
		return "", err
	}
	if !ctl.ViaSocket(ctx) {
		return strings.TrimRight(c.url, "/") + "/", nil
	}
	var r api.Report
	if err := json.Unmarshal(body, &r); err != nil {
		return "", fmt.Errorf("decoding status: %w", err)
	}
	if r.HTTP == "" {
		why := r.HTTPError
		if why == "" {
			why = "it was started without an address (--listen \"\")"
		}
		return "", fmt.Errorf("mcpgw's daemon (pid %d) runs without HTTP, so it has no page: %s. Free the port or give the daemon another address ($MCPGW_LISTEN, or serve --listen), then restart it; `mcpgw status` and `mcpgw approve` work meanwhile", r.PID, why)
	}
	host, port, err := net.SplitHostPort(r.HTTP)
	if err != nil {
		return "", fmt.Errorf("the daemon's HTTP address %q: %w", r.HTTP, err)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1" // listening everywhere, here too
	}
	return "http://" + net.JoinHostPort(host, port) + "/", nil
}
