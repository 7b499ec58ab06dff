package upstream

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Sentinel errors callers may branch on with errors.Is.
var (
	// ErrClosed is returned for an upstream that was removed from the
	// configuration or whose pool was closed.
	ErrClosed = errors.New("upstream closed")
	// ErrNeedsAuth is matched by an *AuthError: the upstream answered 401 and
	// is not retried until Connect is called or its configuration changes.
	ErrNeedsAuth = errors.New("upstream needs authentication")
	// ErrBackingOff is matched by a *BackoffError: recent connects failed and
	// the next attempt is not due yet.
	ErrBackingOff = errors.New("upstream backing off after failed connects")
	// ErrUntrusted is returned for a server from a project directory the
	// user has not trusted (registry.Server.Untrusted): it is never started.
	ErrUntrusted = errors.New("server is from an untrusted project directory and is never started")
)

// A TimeoutError reports that connecting to an upstream (Op "connect") or a
// request to it took longer than its StartupTimeout or RequestTimeout.
// It matches context.DeadlineExceeded.
type TimeoutError struct {
	Server string        // server name
	Op     string        // what timed out, e.g. `connect` or `calling tool "sleep"`
	After  time.Duration // the timeout that expired
	Detail string        // optional: e.g. the upstream's last stderr lines
}

func (e *TimeoutError) Error() string {
	msg := fmt.Sprintf("upstream %q: %s timed out after %s", e.Server, e.Op, e.After)
	if e.Detail != "" {
		msg += "; " + e.Detail
	}
	return msg
}

// Timeout reports true, as net.Error does.
func (e *TimeoutError) Timeout() bool { return true }

// Is makes errors.Is(err, context.DeadlineExceeded) true.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// A BackoffError is returned without contacting the upstream while it is
// backing off after failed connects. It matches ErrBackingOff.
type BackoffError struct {
	Server    string
	Failures  int       // consecutive failed connects
	NextRetry time.Time // when the next connect may be tried
	Wait      time.Duration
	LastError string // the last connect error
}

func (e *BackoffError) Error() string {
	return fmt.Sprintf("upstream %q is unavailable after %d failed connect(s); next try at %s (in %s); last error: %s",
		e.Server, e.Failures, e.NextRetry.Format(time.TimeOnly), e.Wait.Round(time.Second), e.LastError)
}

// Is makes errors.Is(err, ErrBackingOff) true.
func (e *BackoffError) Is(target error) bool { return target == ErrBackingOff }

// An AuthError reports an upstream that rejected mcpgw's credentials (HTTP
// 401). It matches ErrNeedsAuth.
type AuthError struct {
	Server string
	Reason string // e.g. the WWW-Authenticate challenge
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("upstream %q needs authentication: %s", e.Server, e.Reason)
}

// Is makes errors.Is(err, ErrNeedsAuth) true.
func (e *AuthError) Is(target error) bool { return target == ErrNeedsAuth }

// An ExchangeError reports that the token a server with a tokenExchange
// block needs could not be had for the calling user: refused by the
// issuer, or the issuer not reached. Err says which.
type ExchangeError struct {
	Server string
	Err    error
}

func (e *ExchangeError) Error() string {
	return fmt.Sprintf("upstream %q gets each user's own token by token exchange: %v", e.Server, e.Err)
}

func (e *ExchangeError) Unwrap() error { return e.Err }

// An ExitError reports that a stdio upstream's process exited, with the last
// lines it wrote to stderr.
type ExitError struct {
	Server string
	PID    int
	Status string   // e.g. "exit status 3" or "signal: killed"
	Stderr []string // last lines of stderr, oldest first
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("upstream %q: process %d exited (%s)", e.Server, e.PID, e.Status)
	return msg + stderrSuffix(e.Stderr)
}

// stderrSuffix formats the last stderr lines for appending to an error.
func stderrSuffix(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return stderrHeader + strings.Join(lines, "\n  ")
}

const stderrHeader = "; last stderr lines:\n  "

// stateText is a failed connect's error as the upstream's state keeps it
// (Status.LastError), for status lines and lists, which show a first
// line: when the server exited, the last thing it wrote on stderr comes
// first (with the exit status), since that is where a server says what it
// lacks; when it did not (a timeout), the error and that line. The whole
// error follows.
func stateText(err error) string {
	msg := err.Error()
	head, tail, ok := strings.Cut(msg, stderrHeader)
	if !ok {
		return msg
	}
	cause := ""
	for _, l := range slices.Backward(strings.Split(tail, "\n  ")) {
		if l = strings.TrimSpace(l); l != "" && !nodeVersionLine.MatchString(l) {
			cause = l
			break
		}
	}
	if cause == "" {
		return msg
	}
	var exit *ExitError
	if errors.As(err, &exit) {
		return cause + " (" + exit.Status + ")\n" + msg
	}
	return head + " (stderr: " + cause + ")\n" + msg
}

// nodeVersionLine is the line Node.js ends an uncaught exception's report
// with ("Node.js v22.1.0"): never the cause.
var nodeVersionLine = regexp.MustCompile(`^Node\.js v[0-9.]+$`)
