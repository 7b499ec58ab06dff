package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/mcpgw/mcpgw/upstream/oauth"
)

// terminalBrowser is the oauth.Browser of `mcpgw login`: it prints the
// authorization URL, opens it with open unless paste, and returns the
// redirect, received by the callback listener or pasted by the user (for
// machines without a browser).
func terminalBrowser(paste bool, stdin io.Reader, stdout io.Writer, open func(string) error) oauth.Browser {
	return func(ctx context.Context, authURL string, redirect <-chan *url.URL) (*url.URL, error) {
		fmt.Fprintf(stdout, "Open this URL to log in:\n\n  %s\n\n", authURL)
		if paste {
			fmt.Fprint(stdout, "Then paste the address your browser ends on: ")
			line, err := bufio.NewReader(stdin).ReadString('\n')
			if err != nil && line == "" {
				return nil, fmt.Errorf("reading the pasted URL: %w", err)
			}
			return url.Parse(strings.TrimSpace(line))
		}
		if err := open(authURL); err != nil {
			fmt.Fprintf(stdout, "(could not open a browser: %v)\n", err)
		}
		fmt.Fprintln(stdout, "Waiting for the browser…")
		select {
		case u := <-redirect:
			return u, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
