package deploy

import (
	"context"
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
)

// DialDaemon connects to the daemon's socket after checking it is ours.
func DialDaemon(sock string) (net.Conn, error) {
	if err := CheckSocketOwner(sock); err != nil {
		return nil, err
	}
	return net.DialTimeout("unix", sock, 2*time.Second)
}

// LogPath is the log of a daemon the shim started: mcpgw.log in StateDir,
// at most 10 MB, with one older file kept beside it.
func LogPath() string { return filepath.Join(StateDir(), "mcpgw.log") }

// StartDaemon runs this binary with args (`serve ...` listening on sock)
// in the background, detached from the caller's session, logging to
// LogPath, and waits for its socket. Shims racing to do this serialise on
// a lock; the loser finds the winner's daemon. A socket file nobody
// answers on is stale and removed.
func StartDaemon(ctx context.Context, sock string, args []string, timeout time.Duration) (net.Conn, error) {
	dir := filepath.Dir(sock)
	if err := EnsurePrivateDir(dir); err != nil {
		return nil, err
	}
	unlock, err := LockFile(filepath.Join(dir, "start.lock"), true)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if conn, err := DialDaemon(sock); err == nil {
		return conn, nil
	}
	if _, err := os.Lstat(sock); err == nil {
		_ = os.Remove(sock) // stale: nobody answered
	}

	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the mcpgw binary: %w", err)
	}
	logDir := StateDir()
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return nil, err
	}
	// The daemon writes its log to LogPath itself, bounded and rotated;
	// the file also takes what the process writes before that (and a
	// crash's trace), appended.
	logPath := LogPath()
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(exe, append(args, "--log-file", logPath)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outlive this shim and its terminal
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting mcpgw daemon: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()

	deadline := time.Now().Add(timeout)
	for {
		if conn, err := DialDaemon(sock); err == nil {
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

// DialOrStartDaemon dials the daemon's socket; when none answers and start
// is set, it starts one with args (see StartDaemon) and dials that.
func DialOrStartDaemon(ctx context.Context, sock string, start bool, args []string, timeout time.Duration) (net.Conn, error) {
	conn, err := DialDaemon(sock)
	switch {
	case err == nil:
		return conn, nil
	case !start:
		return nil, fmt.Errorf("no mcpgw daemon at %s: %w", sock, err)
	}
	return StartDaemon(ctx, sock, args, timeout)
}

// ShimLogger is the log of a process whose stdout carries protocol bytes
// (the stdio shim): plain text on stderr, without time and level, which
// the client that runs it adds or does not want.
func ShimLogger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == slog.LevelKey {
				return slog.Attr{}
			}
			return a
		},
	}))
}
