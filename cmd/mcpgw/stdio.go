package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/gateway"
	"github.com/mcpgw/mcpgw/gateway/shim"
)

// stdioShim is `mcpgw stdio`: it connects an MCP client that speaks stdio
// to the daemon's unix socket, starting the daemon when none answers. Only
// protocol bytes ever go to stdout; messages go to stderr.
func stdioShim(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("stdio", flag.ContinueOnError)
	fs.SetOutput(stderr)
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
	dial := func(ctx context.Context) (net.Conn, error) {
		conn, err := dialDaemon(*sock)
		if err == nil || *noStart {
			if err != nil {
				err = fmt.Errorf("no mcpgw daemon at %s: %w", *sock, err)
			}
			return conn, err
		}
		return startDaemon(ctx, *sock, *config, *timeout)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == slog.LevelKey {
				return slog.Attr{}
			}
			return a
		},
	})).With("component", "mcpgw stdio")
	return shim.Run(ctx, stdin, stdout, shim.Options{
		Dial:    dial,
		Version: version,
		Logger:  log,
		Hello: gateway.Hello{Protocol: gateway.HandshakeProtocol, Version: version, Cwd: cwd, Mode: *mode,
			DirectTools: os.Getenv("MCP_DIRECT_TOOLS"), ClientPrefix: *prefix},
	})
}

// dialDaemon connects to the daemon's socket after checking it is ours.
func dialDaemon(sock string) (net.Conn, error) {
	if err := deploy.CheckSocketOwner(sock); err != nil {
		return nil, err
	}
	return net.DialTimeout("unix", sock, 2*time.Second)
}

// startDaemon starts `mcpgw serve` in the background and waits for its
// socket. Shims racing to do this serialise on a lock; the loser finds the
// winner's daemon. A socket file nobody answers on is stale and removed.
func startDaemon(ctx context.Context, sock, config string, timeout time.Duration) (net.Conn, error) {
	dir := filepath.Dir(sock)
	if err := deploy.EnsurePrivateDir(dir); err != nil {
		return nil, err
	}
	unlock, err := deploy.LockFile(filepath.Join(dir, "start.lock"), true)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if conn, err := dialDaemon(sock); err == nil {
		return conn, nil
	}
	if _, err := os.Lstat(sock); err == nil {
		_ = os.Remove(sock) // stale: nobody answered
	}

	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the mcpgw binary: %w", err)
	}
	logDir := deploy.StateDir()
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return nil, err
	}
	logPath := filepath.Join(logDir, "mcpgw.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	args := []string{"serve", "--socket", sock, "--log-format", "json"}
	if config != "" {
		args = append(args, "--config", config)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outlive this shim and its terminal
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting mcpgw daemon: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()

	deadline := time.Now().Add(timeout)
	for {
		if conn, err := dialDaemon(sock); err == nil {
			return conn, nil
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("the mcpgw daemon exited at start; see %s:\n%s", logPath, tail(logPath, 10))
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the mcpgw daemon did not open %s within %v; see %s", sock, timeout, logPath)
		}
	}
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
