// Command mcpgw is a local, multiplexing MCP gateway: one daemon that every
// agent session connects to as a single MCP server, in front of many
// upstream MCP servers started lazily and shared by all sessions.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// The memory profiler is off unless serve --memprofile turns it on. By
// default the runtime samples an allocation in every 512 KiB and keeps a
// record of each stack it sampled, in a hash table of its own: a daemon
// that runs for hours touches all of it, 1.4 MB of RSS (a quarter of an
// idle daemon's) that nothing reads. Set here, before main, so that
// little is sampled first.
func init() { runtime.MemProfileRate = 0 }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first SIGINT or SIGTERM the default action is back: a
	// second one ends the process even if shutting down hangs.
	context.AfterFunc(ctx, stop)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "mcpgw:", err)
		os.Exit(1)
	}
}

// run dispatches a subcommand. It is main without the process: tests call it.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return serve(ctx, rest, stdin, stdout, stderr)
	case "stdio":
		return stdioShim(ctx, rest, stdin, stdout, stderr)
	case "status":
		return statusCmd(ctx, rest, stdout, stderr)
	case "check":
		return checkCmd(ctx, rest, stdout, stderr)
	case "trust":
		return trustCmd(ctx, rest, stdout, stderr)
	case "untrust":
		return untrustCmd(ctx, rest, stdout, stderr)
	case "approve":
		return approveCmd(ctx, rest, stdout, stderr)
	case "audit":
		return auditCmd(ctx, rest, stdout, stderr)
	case "reload":
		return reloadCmd(ctx, rest, stdout, stderr)
	case "tools", "search", "call", "connect", "describe", "script":
		return proxyCmd(ctx, cmd, rest, stdin, stdout, stderr)
	case "service":
		return serviceCmd(ctx, rest, stdout, stderr)
	case "healthcheck":
		return healthcheck(ctx, rest, stdout, stderr)
	case "bench":
		return benchCmd(rest, stdout)
	case "logs":
		return logsCmd(ctx, rest, stdout, stderr)
	case "ui":
		return uiCmd(ctx, rest, stdout, stderr)
	case "completion":
		return completionCmd(rest, stdout)
	case "__servers":
		return serverNames(stdout)
	case "login":
		return loginCmd(ctx, rest, stdin, stdout, stderr)
	case "logout":
		return logoutCmd(ctx, rest, stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "mcpgw", version)
		return nil
	case "help", "-h", "--help":
		if len(rest) > 0 && rest[0] != "help" && !strings.HasPrefix(rest[0], "-") {
			switch rest[0] {
			case "completion", "version", "service":
				// No flags of theirs to list here.
				if _, ok := docs[rest[0]]; ok {
					writeDoc(stdout, rest[0], nil)
					return nil
				}
			}
			// `mcpgw help CMD` is `mcpgw CMD -h`, on stdout.
			err := run(ctx, []string{rest[0], "-h"}, stdin, stdout, stdout)
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		if meant := meantCommand(cmd); meant != "" {
			return fmt.Errorf("unknown command %q; did you mean \"mcpgw %s\"?", cmd, meant)
		}
		return fmt.Errorf("unknown command %q", cmd)
	}
}

// meantCommand returns the command line a mistaken command most likely
// meant: a subcommand of another command (install is `service install`),
// or a command one or two edits away; "" if none.
func meantCommand(cmd string) string {
	switch cmd {
	case "install", "uninstall":
		return "service " + cmd
	case "start", "daemon", "run":
		return "serve"
	}
	best, bestDist := "", 3
	for _, c := range commands {
		if d := editDistance(cmd, c); d < bestDist && d < len(c) {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of two neighbours.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
