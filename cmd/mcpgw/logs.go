package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

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
	var last []string
	for {
		lines, err := fetchLogs(ctx, &c, fs.Arg(0))
		if err != nil {
			return err
		}
		for _, l := range newLines(last, lines) {
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

func fetchLogs(ctx context.Context, c *clientFlags, server string) ([]string, error) {
	resp, err := c.do(ctx, http.MethodGet, "/-/logs?server="+url.QueryEscape(server))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("logs: %s", strings.TrimSpace(string(body)))
	}
	text := strings.TrimRight(string(body), "\n")
	if text == "" {
		return nil, nil
	}
	return strings.Split(text, "\n"), nil
}

// newLines returns the lines of cur after what prev already showed (the
// buffers are rings: old lines fall off the front).
func newLines(prev, cur []string) []string {
	if len(prev) == 0 {
		return cur
	}
	// The longest suffix of prev that starts cur.
	for k := min(len(prev), len(cur)); k > 0; k-- {
		if slices.Equal(prev[len(prev)-k:], cur[:k]) {
			return cur[k:]
		}
	}
	return cur
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
