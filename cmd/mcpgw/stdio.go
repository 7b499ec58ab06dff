package main

import (
	"context"
	"io"
	"net"
	"os"
	"time"

	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/internal/shim"
	"github.com/mcpgw/mcpgw/internal/shim/wire"
)

// shimSettle is when a shim hands back what its start touched.
const shimSettle = 2 * time.Second

// stdioShim is `mcpgw stdio`: it connects an MCP client that speaks stdio
// to the daemon's unix socket, starting the daemon when none answers. Only
// protocol bytes ever go to stdout; messages go to stderr.
func stdioShim(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("stdio", stderr)
	sock := fs.String("socket", deploy.DefaultSocket(), "daemon socket")
	mode := fs.String("mode", "", "session mode: proxy, toolsearch or direct (default: the config's)")
	prefix := fs.String("client-prefix", "", "how the client names mcpgw's tools: KEY_ (pi-mcp-adapter), mcp__KEY__ (Pi 1.x) or none (default: recognised from the client)")
	noStart := fs.Bool("no-start", false, "fail instead of starting a daemon when none runs")
	config := fs.String("config", "", "config file for a daemon this shim starts")
	timeout := fs.Duration("start-timeout", 15*time.Second, "how long to wait for a started daemon")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cwd, _ := os.Getwd()
	serveArgs := []string{"serve", "--socket", *sock, "--log-format", "json"}
	if *config != "" {
		serveArgs = append(serveArgs, "--config", *config)
	}
	dial := func(ctx context.Context) (net.Conn, error) {
		return deploy.DialOrStartDaemon(ctx, *sock, !*noStart, serveArgs, *timeout)
	}
	log := deploy.ShimLogger(stderr).With("component", "mcpgw stdio")
	// A shim lives as long as its client's session and, once connected,
	// only copies bytes. What the runtime's start read of the executable
	// into the page cache, around what it used, is dropped before the
	// daemon handles this session and maps every cached page around each
	// of its own faults (deploy.EvictText); what the shim's own start
	// touched goes back once it is connected.
	deploy.EvictText()
	trim := time.AfterFunc(shimSettle, deploy.EvictText)
	defer trim.Stop()
	return shim.Run(ctx, stdin, stdout, shim.Options{
		Dial:    dial,
		Version: version,
		Logger:  log,
		Hello: wire.Hello{Protocol: wire.HandshakeProtocol, Version: version, Cwd: cwd, Mode: *mode,
			DirectTools: os.Getenv("MCP_DIRECT_TOOLS"), ClientPrefix: *prefix},
	})
}
