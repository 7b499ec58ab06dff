package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/jsonwire"
	"github.com/mcpgw/mcpgw/registry"
)

// CallOptions are optional parts of a call (nil: none).
type CallOptions struct {
	// OnProgress, if set, receives the upstream's progress notifications
	// for this call (the call carries a progress token of its own).
	OnProgress func(ctx context.Context, p *mcp.ProgressNotificationParams)
	// Meta is the caller's request _meta, passed on to the upstream (but
	// for the progress token, which the pool sets itself).
	Meta mcp.Meta
	// Timeout bounds the call instead of the upstream's RequestTimeout
	// (for a config entry that shares the upstream under another name);
	// 0 means the upstream's.
	Timeout time.Duration
	// As is the configured name the call came by, as WithName would say
	// it without a context of its own: it is counted under that name
	// (Status.ByName). "" means the context's, or the upstream's own.
	As string
	// Input, if set, makes the call one round of protocol 2026-07-28's
	// input_required exchange for a caller that answers input requests
	// itself: the call carries the caller's answers and the state it was
	// given, untouched, and a result that needs more input is returned as
	// it is rather than answered through the caller's peer.
	Input *InputRound
}

// InputRound is what a caller of protocol 2026-07-28 sends back with a
// call an input_required result asked input for (both empty on the
// first round).
type InputRound struct {
	Responses mcp.InputResponseMap
	State     string
	// Capabilities are the caller's (its _meta member), for a request
	// that carries no _meta of the caller's otherwise: the upstream asks
	// for nothing the caller did not declare.
	Capabilities any
}

// meta is the _meta of a relayed round of a request that carries none of
// the caller's otherwise: its capabilities, if it declared any.
func (in *InputRound) meta() mcp.Meta {
	if in.Capabilities == nil {
		return nil
	}
	return mcp.Meta{mcp.MetaKeyClientCapabilities: in.Capabilities}
}

// Call calls tool with args (any value that marshals to a JSON object),
// connecting first if needed (single-flight: concurrent callers share one
// connect). The call is bounded by the server's RequestTimeout (and ctx); a
// timeout is a *TimeoutError. A tool's own failure is a result with IsError
// set, not an error. If the upstream's process died, the error is an
// *ExitError with its last stderr lines; an expired HTTP session is
// reconnected and the call retried once.
func (u *Upstream) Call(ctx context.Context, tool string, args any, opts *CallOptions) (*mcp.CallToolResult, error) {
	res, raw, err := u.call(ctx, tool, args, opts)
	if err != nil || res != nil {
		return res, err
	}
	res = new(mcp.CallToolResult)
	if err := DecodeResult(raw, res); err != nil {
		return nil, fmt.Errorf("calling tool %q: the upstream's result: %w", tool, err)
	}
	return res, nil
}

// CallRaw is Call with the result as JSON (a CallToolResult). A stdio
// upstream's result is the bytes the upstream wrote, when the call needs
// nothing of the SDK (no progress, no further input); otherwise it is the
// SDK's result, encoded.
func (u *Upstream) CallRaw(ctx context.Context, tool string, args any, opts *CallOptions) (json.RawMessage, error) {
	res, raw, err := u.call(ctx, tool, args, opts)
	if err != nil || raw != nil {
		return raw, err
	}
	return json.Marshal(res)
}

// call makes the call through the connection's raw path where it can
// (then raw is set), else through the SDK (then res is).
func (u *Upstream) call(ctx context.Context, tool string, args any, opts *CallOptions) (res *mcp.CallToolResult, raw json.RawMessage, err error) {
	if noArguments(args) {
		// Absent or null arguments: send an empty object, which every
		// server accepts (some refuse null).
		args = struct{}{}
	}
	var timeout time.Duration
	op := operation{format: "calling tool %q", arg: tool}
	if opts != nil {
		timeout, op.as = opts.Timeout, opts.As
	}
	err = u.doAttempts(ctx, op, timeout, func(ctx context.Context, s *session, timeout time.Duration) (timedOut bool, err error) {
		var first *mcp.CallToolResult // a raw call's result that needs input
		relay := opts != nil && opts.Input != nil
		// The raw path sends no input responses: a relayed call takes it
		// only on its first round.
		answering := relay && (len(opts.Input.Responses) > 0 || opts.Input.State != "")
		if s.lines != nil && (opts == nil || opts.OnProgress == nil) && !answering {
			var done bool
			if raw, first, done, timedOut, err = u.rawToolCall(ctx, s, tool, args, opts, &timeout); done {
				return timedOut, err
			}
		}
		if relay && first != nil {
			res = first // the raw call's result, which needs input: the caller's to give
			return false, nil
		}
		return u.sdkToolCall(ctx, s, tool, args, opts, timeout, first, &res)
	})
	if raw != nil {
		raw = withoutServerInfo(raw)
	}
	if res != nil {
		dropServerInfo(res)
	}
	return res, raw, err
}

// rawToolCall makes a call on s's raw path (lineConn.rawCall): done, with
// its raw result or error, unless the call cannot go that way (then
// nothing was sent) or the result needs input and the SDK's rounds are to
// follow with first, its result decoded, in what is left of *timeout.
// Apart from call's closure so that a call waiting for its upstream holds
// a small stack: the SDK's path needs a much larger frame.
func (u *Upstream) rawToolCall(ctx context.Context, s *session, tool string, args any, opts *CallOptions, timeout *time.Duration) (raw json.RawMessage, first *mcp.CallToolResult, done, timedOut bool, err error) {
	p, ok := u.rawCallParams(s, tool, args, opts)
	if !ok {
		return nil, nil, false, false, nil
	}
	start := time.Now()
	r, err := s.lines.rawCall(ctx, "tools/call", *p, *timeout)
	putLineBuf(p)
	if err != nil {
		return nil, nil, true, errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil, err
	}
	if !needsInput(r) {
		return r, nil, true, false, nil
	}
	first = new(mcp.CallToolResult)
	if err := json.Unmarshal(r, first); err != nil {
		return nil, nil, true, false, fmt.Errorf("the upstream's result: %w", err)
	}
	// The SDK's rounds that follow have what is left of it.
	if *timeout -= time.Since(start); *timeout <= 0 {
		return nil, nil, true, true, context.DeadlineExceeded
	}
	return nil, first, false, false, nil
}

// sdkToolCall makes a call through s's SDK client session, within
// timeout, its input rounds included; first is the raw path's result
// that needs input, if the call started there.
func (u *Upstream) sdkToolCall(ctx context.Context, s *session, tool string, args any, opts *CallOptions, timeout time.Duration, first *mcp.CallToolResult, res **mcp.CallToolResult) (timedOut bool, err error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	parent := ctx
	defer func() { timedOut = errors.Is(cctx.Err(), context.DeadlineExceeded) && parent.Err() == nil }()
	ctx = cctx
	params := &mcp.CallToolParams{Name: tool, Arguments: args, Meta: u.callMeta(opts)}
	if opts != nil && opts.OnProgress != nil {
		// Its notifications reach the client before its result (see
		// progress.go).
		token, w, done := u.progress.watch(opts.OnProgress)
		defer done()
		if s.lines != nil {
			defer w.settle(progressSettle)
		} else {
			defer time.Sleep(progressSettle)
		}
		params.SetProgressToken(token)
	}
	if opts != nil && opts.Input != nil {
		params.InputResponses, params.RequestState = opts.Input.Responses, opts.Input.State
		*res, err = s.cs.CallTool(ctx, params)
		return false, err // timedOut: set on return
	}
	*res, err = roundTrips(ctx, u, func(in mcp.InputResponseMap, state string) (*mcp.CallToolResult, error) {
		if first != nil {
			r := first
			first = nil
			return r, nil
		}
		params.InputResponses, params.RequestState = in, state
		return s.cs.CallTool(ctx, params)
	}, func(r *mcp.CallToolResult) (mcp.InputRequestMap, string, bool) {
		return r.InputRequests, r.RequestState, r.NeedsInput()
	})
	return false, err
}

// callMeta is the _meta of a call: the caller's (but for the progress
// token, which the pool sets itself) and the log level sessions asked for.
func (u *Upstream) callMeta(opts *CallOptions) mcp.Meta {
	var meta mcp.Meta
	if opts != nil && len(opts.Meta) > 0 {
		meta = make(mcp.Meta, len(opts.Meta))
		for k, v := range opts.Meta {
			// A caller that answers input requests itself (Input) says
			// what it can be asked: the upstream is to ask no more.
			keep := opts.Input != nil && k == mcp.MetaKeyClientCapabilities
			if k != "progressToken" && (!hopMeta[k] || keep) {
				meta[k] = v
			}
		}
	}
	if level := u.pool.LogLevel(); level != "" {
		// Sessionless upstreams (protocol 2026-07-28) take the level per
		// request; others ignore the key and use setLevel's.
		if meta == nil {
			meta = mcp.Meta{}
		}
		//lint:ignore SA1019 MCP logging is deprecated in 2026-07-28 but still in use; a gateway forwards it
		meta[mcp.MetaKeyLogLevel] = string(level)
	}
	return meta
}

// hopMeta are the per-request _meta members of protocol 2026-07-28
// (SEP-2575) that describe one hop: the caller's protocol version, client
// and capabilities, and log level are the downstream client's, not
// mcpgw's towards the upstream (which speaks its own version, and which
// the SDK tells mcpgw's own). Forwarded, a 2026-07-28 client's version
// would mark the call as one of that protocol to an upstream that does
// not speak it.
var hopMeta = map[string]bool{
	mcp.MetaKeyProtocolVersion:    true,
	mcp.MetaKeyClientInfo:         true,
	mcp.MetaKeyClientCapabilities: true,
	//lint:ignore SA1019 the key is dropped, not used
	mcp.MetaKeyLogLevel: true,
}

// rawCallParams encodes the params of a raw tools/call as the SDK would:
// name, arguments, and _meta with, for protocol 2026-07-28 and later, the
// per-request members the SDK adds. ok is false when they are not known
// yet (the SDK has sent no request on the connection): the SDK makes the
// call.
//
// The params are in a buffer of lineBufs, which the caller puts back once
// they are sent.
func (u *Upstream) rawCallParams(s *session, tool string, args any, opts *CallOptions) (*[]byte, bool) {
	var reqMeta []metaMember
	if init := s.cs.InitializeResult(); init == nil || init.ProtocolVersion >= sessionlessProtocol {
		if reqMeta = s.lines.requestMeta(); reqMeta == nil {
			return nil, false
		}
	}
	argData, ok := args.(json.RawMessage)
	if !ok {
		var err error
		if argData, err = json.Marshal(args); err != nil {
			return nil, false
		}
	}
	buf := getLineBuf()
	p := append((*buf)[:0], `{"name":`...)
	p = strconv.AppendQuote(p, tool)
	p = append(p, `,"arguments":`...)
	p = append(p, argData...)
	meta := u.callMeta(opts)
	if len(meta) > 0 || reqMeta != nil {
		p = append(p, `,"_meta":{`...)
		n := 0
		for k, v := range meta {
			vb, err := json.Marshal(v)
			if err != nil {
				putLineBuf(buf)
				return nil, false
			}
			if n > 0 {
				p = append(p, ',')
			}
			n++
			p = strconv.AppendQuote(p, k)
			p = append(p, ':')
			p = append(p, vb...)
		}
		for _, m := range reqMeta {
			if _, own := meta[m.key]; own {
				continue // the caller's own member of that name wins, as with the SDK
			}
			if n > 0 {
				p = append(p, ',')
			}
			n++
			p = append(p, m.member...)
		}
		p = append(p, '}')
	}
	*buf = append(p, '}')
	return buf, true
}

// needsInput reports whether a raw CallToolResult asks for more input
// (protocol 2026-07-28's multi round-trip requests).
func needsInput(raw json.RawMessage) bool {
	rt, ok := jsonwire.Member(raw, "resultType")
	return ok && string(rt) == `"input_required"`
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

// GetPrompt gets the prompt called name with args, as Call does for tools;
// in, if set, is the caller's round of the input_required exchange (see
// CallOptions.Input).
func (u *Upstream) GetPrompt(ctx context.Context, name string, args map[string]string, in *InputRound) (*mcp.GetPromptResult, error) {
	var res *mcp.GetPromptResult
	err := u.do(ctx, operation{format: "getting prompt %q", arg: name}, func(ctx context.Context, s *session) error {
		params := &mcp.GetPromptParams{Name: name, Arguments: args}
		var err error
		if in != nil { // see CallOptions.Input
			params.Meta, params.InputResponses, params.RequestState = in.meta(), in.Responses, in.State
			res, err = s.cs.GetPrompt(ctx, params)
			return err
		}
		res, err = roundTrips(ctx, u, func(in mcp.InputResponseMap, state string) (*mcp.GetPromptResult, error) {
			params.InputResponses, params.RequestState = in, state
			return s.cs.GetPrompt(ctx, params)
		}, func(r *mcp.GetPromptResult) (mcp.InputRequestMap, string, bool) {
			return r.InputRequests, r.RequestState, r.NeedsInput()
		})
		return err
	})
	if res != nil {
		dropServerInfo(res)
	}
	return res, err
}

// Complete asks the upstream to complete an argument of a prompt or a
// resource template, as Call does for tools.
func (u *Upstream) Complete(ctx context.Context, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	var res *mcp.CompleteResult
	err := u.do(ctx, operation{format: "completing an argument"}, func(ctx context.Context, s *session) error {
		var err error
		res, err = s.cs.Complete(ctx, params)
		return err
	})
	if res != nil {
		dropServerInfo(res)
	}
	return res, err
}

// ReadResource reads the resource at uri, as Call does for tools; in, if
// set, is the caller's round of the input_required exchange (see
// CallOptions.Input).
func (u *Upstream) ReadResource(ctx context.Context, uri string, in *InputRound) (*mcp.ReadResourceResult, error) {
	var res *mcp.ReadResourceResult
	err := u.do(ctx, operation{format: "reading resource %q", arg: uri}, func(ctx context.Context, s *session) error {
		params := &mcp.ReadResourceParams{URI: uri}
		var err error
		if in != nil {
			params.Meta, params.InputResponses, params.RequestState = in.meta(), in.Responses, in.State
			res, err = s.cs.ReadResource(ctx, params)
			return err
		}
		res, err = roundTrips(ctx, u, func(in mcp.InputResponseMap, state string) (*mcp.ReadResourceResult, error) {
			params.InputResponses, params.RequestState = in, state
			return s.cs.ReadResource(ctx, params)
		}, func(r *mcp.ReadResourceResult) (mcp.InputRequestMap, string, bool) {
			return r.InputRequests, r.RequestState, r.NeedsInput()
		})
		return err
	})
	if res != nil {
		dropServerInfo(res)
	}
	return res, err
}

// operation says what a request was doing, in its errors: format with
// arg, if format has a verb. It is written only for an error, not for
// every call.
type operation struct {
	format, arg string
	as          string // the name it is counted under, if not the context's (CallOptions.As)
}

func (o operation) String() string {
	if !strings.Contains(o.format, "%") {
		return o.format
	}
	return fmt.Sprintf(o.format, o.arg)
}

// do runs f on a session, with the request timeout, accounting and error
// translation shared by Call and ReadResource.
func (u *Upstream) do(ctx context.Context, op operation, f func(context.Context, *session) error) error {
	return u.doWithin(ctx, op, 0, f)
}

// doWithin is do bounded by limit instead of the server's request
// timeout, unless limit is 0.
func (u *Upstream) doWithin(ctx context.Context, op operation, limit time.Duration, f func(context.Context, *session) error) error {
	return u.doAttempts(ctx, op, limit, func(ctx context.Context, s *session, timeout time.Duration) (bool, error) {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		err := f(cctx, s)
		return errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil, err
	})
}

// A bounded op runs an operation on s within timeout, and says whether
// the timeout ended it. It applies the bound itself: a raw call waits on
// a timer, where a context with a deadline would cost it a context and a
// place among its parent's children (doWithin makes one for the others).
type bounded func(ctx context.Context, s *session, timeout time.Duration) (timedOut bool, err error)

// doAttempts is doWithin with the timeout left to f.
func (u *Upstream) doAttempts(ctx context.Context, op operation, limit time.Duration, f bounded) (err error) {
	name := op.as
	if name == "" {
		name = nameFrom(ctx)
	}
	u.mu.Lock()
	if name == "" {
		name = u.srv.Name
	}
	u.calls++
	if u.byName == nil {
		u.byName = map[string]Counts{}
	}
	c := u.byName[name]
	c.Calls++
	u.byName[name] = c
	u.mu.Unlock()
	defer func() {
		if err != nil {
			u.mu.Lock()
			u.errs++
			c := u.byName[name]
			c.Errors++
			u.byName[name] = c
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
		timeout := limit
		if timeout <= 0 {
			timeout = requestTimeout(srv)
		}
		var timedOut bool
		timedOut, err = f(ctx, s, timeout)
		u.release()
		if err == nil {
			return nil
		}
		if err = u.attemptFailed(ctx, s, srv, op, err, timedOut, timeout, try); err != nil {
			return err
		}
		// The upstream's session had expired: once more, on a new one.
	}
}

// attemptFailed makes what an attempt of op on s failed with, err, into
// the error its caller gets; nil when the attempt is to be made again.
// Apart from doAttempts so that a call waiting for its upstream holds a
// small stack.
func (u *Upstream) attemptFailed(ctx context.Context, s *session, srv *registry.Server, op operation, err error, timedOut bool, timeout time.Duration, try int) error {
	switch {
	case timedOut:
		u.checkAfterTimeout(s)
		return &TimeoutError{Server: srv.Name, Op: op.String(), After: timeout}
	case ctx.Err() != nil:
		return err
	case errors.Is(err, mcp.ErrSessionMissing) && try == 0:
		u.logger().Info("upstream session expired; reconnecting")
		u.dropSession(s, "session expired")
		return nil
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

// pingAfterTimeout bounds the health check after a timed-out call.
const pingAfterTimeout = 3 * time.Second

// checkAfterTimeout asks s whether it still answers after a call on it
// timed out: a server that does is only slow with that call; one that does
// not is wedged (a stuck event loop, a dead HTTP stream), and every later
// call would time out too, so its connection is recycled and the next call
// starts afresh.
func (u *Upstream) checkAfterTimeout(s *session) {
	ctx, cancel := context.WithTimeout(u.pool.ctx, pingAfterTimeout)
	defer cancel()
	if err := s.check(ctx); err != nil {
		u.logger().Warn("upstream does not answer after a timed-out call; recycling its connection", "err", err)
		u.dropSession(s, "did not answer a ping after a call timed out")
	}
}
