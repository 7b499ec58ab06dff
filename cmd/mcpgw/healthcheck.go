package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/internal/control"
)

// healthcheck is `mcpgw healthcheck`: it asks a daemon's /healthz and
// exits non-zero unless the answer is 200. It exists for container
// HEALTHCHECKs, where the image has no curl or wget.
func healthcheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("healthcheck", stderr)
	url := fs.String("url", daemonURLDefault(), "the daemon's base URL (default $MCPGW_URL or http://"+deploy.DefaultListen+")")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	answer, err := (&control.Control{URL: *url}).Healthz(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, answer)
	return nil
}
