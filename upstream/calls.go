package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CallOptions are optional parts of a call (nil: none).
type CallOptions struct {
	// OnProgress, if set, receives the upstream's progress notifications
	// for this call (the call carries a progress token of its own).
	OnProgress func(ctx context.Context, p *mcp.ProgressNotificationParams)
	// Meta is the caller's request _meta, passed on to the upstream (but
	// for the progress token, which the pool sets itself).
	Meta mcp.Meta
}

// Call calls tool with args (any value that marshals to a JSON object),
// connecting first if needed (single-flight: concurrent callers share one
// connect). The call is bounded by the server's RequestTimeout (and ctx); a
// timeout is a *TimeoutError. A tool's own failure is a result with IsError
// set, not an error. If the upstream's process died, the error is an
// *ExitError with its last stderr lines; an expired HTTP session is
// reconnected and the call retried once.
func (u *Upstream) Call(ctx context.Context, tool string, args any, opts *CallOptions) (*mcp.CallToolResult, error) {
	var res *mcp.CallToolResult
	if noArguments(args) {
		// Absent or null arguments: send an empty object, which every
		// server accepts (some refuse null).
		args = struct{}{}
	}
	err := u.do(ctx, fmt.Sprintf("calling tool %q", tool), func(ctx context.Context, s *session) error {
		params := &mcp.CallToolParams{Name: tool, Arguments: args}
		if opts != nil && len(opts.Meta) > 0 {
			params.Meta = make(mcp.Meta, len(opts.Meta))
			for k, v := range opts.Meta {
				if k != "progressToken" {
					params.Meta[k] = v
				}
			}
		}
		if level := u.pool.LogLevel(); level != "" {
			// Sessionless upstreams (protocol 2026-07-28) take the level
			// per request; others ignore the key and use setLevel's.
			if params.Meta == nil {
				params.Meta = mcp.Meta{}
			}
			//lint:ignore SA1019 MCP logging is deprecated in 2026-07-28 but still in use; a gateway forwards it
			params.Meta[mcp.MetaKeyLogLevel] = string(level)
		}
		if opts != nil && opts.OnProgress != nil {
			token, done := u.watchProgress(opts.OnProgress)
			defer done()
			// The SDK delivers a call's result on its reading goroutine and
			// notifications on another, in order: a progress notification
			// the server sent just before its result can still be on its
			// way when the result is here. Give it a moment, so that it
			// reaches the client before the result does.
			defer time.Sleep(progressSettle)
			params.SetProgressToken(token)
		}
		var err error
		res, err = roundTrips(ctx, u, func(in mcp.InputResponseMap, state string) (*mcp.CallToolResult, error) {
			params.InputResponses, params.RequestState = in, state
			return s.cs.CallTool(ctx, params)
		}, func(r *mcp.CallToolResult) (mcp.InputRequestMap, string, bool) {
			return r.InputRequests, r.RequestState, r.NeedsInput()
		})
		return err
	})
	return res, err
}

// noArguments reports whether args marshals to nothing or null.
func noArguments(args any) bool {
	switch a := args.(type) {
	case nil:
		return true
	case json.RawMessage:
		return len(bytes.TrimSpace(a)) == 0 || bytes.Equal(bytes.TrimSpace(a), []byte("null"))
	case map[string]any:
		return a == nil
	}
	return false
}

// progressSettle is how long a call that reports progress waits, after its
// result, for progress notifications still being delivered.
const progressSettle = 50 * time.Millisecond

// progressTokens numbers the progress tokens of calls, daemon-wide.
var progressTokens atomic.Int64

// watchProgress registers f for the progress of one call; done forgets it.
func (u *Upstream) watchProgress(f func(context.Context, *mcp.ProgressNotificationParams)) (token string, done func()) {
	token = "mcpgw-" + strconv.FormatInt(progressTokens.Add(1), 10)
	u.progressMu.Lock()
	if u.progress == nil {
		u.progress = make(map[string]func(context.Context, *mcp.ProgressNotificationParams))
	}
	u.progress[token] = f
	u.progressMu.Unlock()
	return token, func() {
		u.progressMu.Lock()
		delete(u.progress, token)
		u.progressMu.Unlock()
	}
}

// progressed routes an upstream progress notification to its call.
func (u *Upstream) progressed(ctx context.Context, p *mcp.ProgressNotificationParams) {
	if p == nil {
		return
	}
	token, _ := p.ProgressToken.(string)
	u.progressMu.Lock()
	f := u.progress[token]
	u.progressMu.Unlock()
	if f != nil {
		f(ctx, p)
	}
}

// GetPrompt gets the prompt called name with args, as Call does for tools.
func (u *Upstream) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	var res *mcp.GetPromptResult
	err := u.do(ctx, fmt.Sprintf("getting prompt %q", name), func(ctx context.Context, s *session) error {
		params := &mcp.GetPromptParams{Name: name, Arguments: args}
		var err error
		res, err = roundTrips(ctx, u, func(in mcp.InputResponseMap, state string) (*mcp.GetPromptResult, error) {
			params.InputResponses, params.RequestState = in, state
			return s.cs.GetPrompt(ctx, params)
		}, func(r *mcp.GetPromptResult) (mcp.InputRequestMap, string, bool) {
			return r.InputRequests, r.RequestState, r.NeedsInput()
		})
		return err
	})
	return res, err
}

// Complete asks the upstream to complete an argument of a prompt or a
// resource template, as Call does for tools.
func (u *Upstream) Complete(ctx context.Context, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	var res *mcp.CompleteResult
	err := u.do(ctx, "completing an argument", func(ctx context.Context, s *session) error {
		var err error
		res, err = s.cs.Complete(ctx, params)
		return err
	})
	return res, err
}

// Subscribe asks the upstream for notifications/resources/updated about uri.
func (u *Upstream) Subscribe(ctx context.Context, uri string) error {
	return u.do(ctx, fmt.Sprintf("subscribing to %s", uri), func(ctx context.Context, s *session) error {
		return s.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	})
}

// Unsubscribe ends a Subscribe.
func (u *Upstream) Unsubscribe(ctx context.Context, uri string) error {
	return u.do(ctx, fmt.Sprintf("unsubscribing from %s", uri), func(ctx context.Context, s *session) error {
		return s.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
}

// ReadResource reads the resource at uri, as Call does for tools.
func (u *Upstream) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	var res *mcp.ReadResourceResult
	err := u.do(ctx, fmt.Sprintf("reading resource %q", uri), func(ctx context.Context, s *session) error {
		params := &mcp.ReadResourceParams{URI: uri}
		var err error
		res, err = roundTrips(ctx, u, func(in mcp.InputResponseMap, state string) (*mcp.ReadResourceResult, error) {
			params.InputResponses, params.RequestState = in, state
			return s.cs.ReadResource(ctx, params)
		}, func(r *mcp.ReadResourceResult) (mcp.InputRequestMap, string, bool) {
			return r.InputRequests, r.RequestState, r.NeedsInput()
		})
		return err
	})
	return res, err
}

// do runs f on a session, with the request timeout, accounting and error
// translation shared by Call and ReadResource.
func (u *Upstream) do(ctx context.Context, op string, f func(context.Context, *session) error) (err error) {
	u.mu.Lock()
	u.calls++
	u.mu.Unlock()
	defer func() {
		if err != nil {
			u.mu.Lock()
			u.errs++
			u.mu.Unlock()
		}
	}()
	peer := PeerFrom(ctx)
	leave, err := u.gate.enter(ctx, peer)
	if err != nil {
		return err
	}
	defer leave()
	if peer != nil {
		u.addPeer(peer)
		defer u.removePeer(peer)
	}
	for try := 0; ; try++ {
		s, srv, err := u.acquire(ctx)
		if err != nil {
			return err
		}
		timeout := requestTimeout(srv)
		cctx, cancel := context.WithTimeout(ctx, timeout)
		err = f(cctx, s)
		timedOut := errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		u.release()
		if err == nil {
			return nil
		}
		switch {
		case timedOut:
			u.checkAfterTimeout(s)
			return &TimeoutError{Server: srv.Name, Op: op, After: timeout}
		case ctx.Err() != nil:
			return err
		case errors.Is(err, mcp.ErrSessionMissing) && try == 0:
			u.logger().Info("upstream session expired; reconnecting")
			u.dropSession(s, "session expired")
			continue
		}
		if s.http != nil {
			if reason, ok := s.http.unauthorized(); ok {
				ae := &AuthError{Server: srv.Name, Reason: reason}
				u.needsAuth(s, ae)
				return fmt.Errorf("%s: %w", op, ae)
			}
		}
		if u.isRetired() {
			return fmt.Errorf("%s on upstream %q: %w (%v)", op, srv.Name, ErrClosed, err)
		}
		if s.proc != nil && (connectionGone(err) || s.ended()) {
			if exit := s.proc.exitError(ctx, exitWait); exit != nil {
				u.sessionLost(s, exit)
				return fmt.Errorf("%s: %w", op, exit)
			}
		}
		return fmt.Errorf("%s on upstream %q: %w", op, srv.Name, err)
	}
}

// pingAfterTimeout bounds the health check after a timed-out call.
const pingAfterTimeout = 3 * time.Second

// checkAfterTimeout pings s after a call on it timed out: a server that
// still answers is only slow with that call; one that does not is wedged
// (a stuck event loop, a dead HTTP stream), and every later call would time
// out too, so its connection is recycled and the next call starts afresh.
func (u *Upstream) checkAfterTimeout(s *session) {
	ctx, cancel := context.WithTimeout(u.pool.ctx, pingAfterTimeout)
	defer cancel()
	if err := s.cs.Ping(ctx, nil); err != nil {
		u.logger().Warn("upstream does not answer after a timed-out call; recycling its connection", "err", err)
		u.dropSession(s, "did not answer a ping after a call timed out")
	}
}
