// Command mcpgw-bench measures what a tool call through a running mcpgw
// daemon costs next to the same call made directly (proxy). It also serves
// the test upstream the proxy bench runs (testserver), so that none of this
// ships in mcpgw. (The search ranking is measured by mcpgw bench search.)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// version names the bench's client to the daemon.
var version = "0.1.0-dev"

const usage = `mcpgw-bench — measure mcpgw

Usage:
  mcpgw-bench proxy [--mcpgw PATH] [--duration 10s] [--rounds 5] [--json]
  mcpgw-bench testserver        the test MCP server on stdin/stdout

Run "mcpgw-bench COMMAND -h" for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "mcpgw-bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	switch args[0] {
	case "proxy":
		return benchProxy(ctx, args[1:], stdin, stdout, stderr)
	case "testserver":
		return fakeupstream.ServeStdio(ctx)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
