package deploy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/lmittmann/tint"
	"golang.org/x/term"

	"github.com/mcpgw/mcpgw/internal/loopback"
)

// How the daemon meets its surroundings: its log, SIGHUP, the address it
// listens on.

// NewLogger is the daemon's logger: level and format as --log-level and
// --log-format say; "auto" is tint's coloured text on a terminal, JSON
// otherwise.
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	// Durations as people write them ("1.5s", "42ms") in every format:
	// the JSON handler would print nanoseconds.
	opts := &slog.HandlerOptions{Level: lvl, ReplaceAttr: durationText}
	switch strings.ToLower(format) {
	case "auto", "":
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			return slog.New(tint.NewTextHandler(w, &tint.Options{Level: lvl, TimeFormat: time.TimeOnly, ReplaceAttr: durationText})), nil
		}
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text", "logfmt":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want auto, text or json", format)
}

// durationText writes a duration as a Go duration string, rounded to
// what a person reads.
func durationText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		d := a.Value.Duration()
		switch {
		case d >= time.Second:
			d = d.Round(time.Millisecond)
		case d >= time.Millisecond:
			d = d.Round(10 * time.Microsecond)
		}
		return slog.String(a.Key, d.String())
	}
	return a
}

// HUPReloads turns SIGHUP into reload requests (at most one pending) until
// stop is called; stop waits for the goroutine it started.
func HUPReloads(ctx context.Context) (reloads <-chan struct{}, stop func()) {
	ch := make(chan struct{}, 1)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				select {
				case ch <- struct{}{}:
				default: // one is pending already
				}
			}
		}
	}()
	return ch, func() { signal.Stop(hup); cancel(); <-done }
}

// ListenAddr checks the address to listen on and returns it with its host
// in a form net.Listen takes: non-loopback addresses are refused unless
// allowed explicitly (the daemon starts processes on behalf of whoever can
// reach it), and shorthand loopback addresses such as 127.1 are spelled out.
func ListenAddr(addr string, allowRemote bool) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--listen %q: %w", addr, err)
	}
	if ip := loopback.ParseIP(host); ip != nil {
		addr = net.JoinHostPort(ip.String(), port)
	}
	if allowRemote || loopback.IsHost(host) {
		return addr, nil
	}
	return "", fmt.Errorf("--listen %q is not a loopback address; anyone who reaches it can start processes as you. Use 127.0.0.1, or pass --allow-remote (with a token: --token-file or $MCPGW_TOKEN) if you mean it", addr)
}
