// Package script runs a model's JavaScript against the gateway's tools:
// one script makes many calls and returns one answer, so the model reads
// the answer instead of every intermediate result.
//
// The engine is QuickJS (modernc.org/quickjs, pure Go), one VM per script,
// closed when it ends. It is a sandbox: the global object holds the
// ECMAScript built-ins and the API below, nothing else — no file system,
// network, environment, process, timers or module loading. The engine's
// allocator enforces a hard memory cap, an interrupt stops even
// `while (true) {}` at the deadline or when the caller cancels, and the
// calls a script makes are bounded in number, parallelism and bytes.
//
// What a script sees:
//
//	await tools.call(name, args) → {ok: true, data} | {ok: false, error: {code, message}}
//	tools.search(query, {limit, offset}) → [{name, server, description, signature}]
//	tools.describe(name)         → {name, server, description, signature, parameters} | null
//	emit(value); console.log(...); return value
//
// A failed call never throws; Promise.all runs calls in parallel, up to
// Limits.Parallel at a time.
package script

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"modernc.org/quickjs"

	"github.com/mcpgw/mcpgw/internal/rawio"
)

//go:embed prelude.js
var prelude string

// Host is what a script reaches: the gateway's tools, each call through
// its one dispatcher (policy, approvals, audit, metrics).
type Host interface {
	// Call calls the tool named name with args (a JSON object).
	Call(ctx context.Context, name string, args json.RawMessage) Outcome
	// Search returns the best tools for query after the first offset, at
	// most limit.
	Search(query string, offset, limit int) []Tool
	// Describe returns the tool named name.
	Describe(name string) (Tool, bool)
}

// Tool is a tool as a script sees it.
type Tool struct {
	Name        string `json:"name"`
	Server      string `json:"server"`
	Description string `json:"description,omitempty"`
	// Signature is the call as TypeScript: name(args: {...}): Output.
	Signature string `json:"signature"`
	// Parameters is the parameters' shape with each one's description
	// (describe only).
	Parameters string `json:"parameters,omitempty"`
}

// Outcome is the result of one call: Data (the structured content, or
// the text as a JSON string) when OK, else an error code and message.
type Outcome struct {
	OK      bool
	Data    json.RawMessage
	Code    string
	Message string
}

// Limits bound one script. Zero fields take the defaults.
type Limits struct {
	Timeout   time.Duration // the whole script: DefaultTimeout, at most MaxTimeout
	Memory    int           // the engine's heap, bytes
	Calls     int           // tool calls per script
	Parallel  int           // calls in flight at once
	DataBytes int           // bytes of call results the script reads, together (settings.scriptResultsBytes)
	// ArgBytes bounds the bytes of arguments the script's calls in flight
	// hold together (settings.scriptArgsBytes): each waiting call holds
	// its own copy outside the engine's heap, so without it a script
	// could make the daemon hold its heap many times over.
	ArgBytes int
}

// Defaults.
const (
	DefaultTimeout   = 30 * time.Second
	MaxTimeout       = 5 * time.Minute
	DefaultMemory    = 64 << 20
	DefaultCalls     = 200
	DefaultParallel  = 8
	DefaultDataBytes = 16 << 20
	DefaultArgBytes  = 16 << 20

	maxConsole = 64 << 10 // bytes of console output kept
	maxEmitted = 1 << 20  // bytes of emitted values kept
)

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	l.Timeout = min(l.Timeout, MaxTimeout)
	if l.Memory <= 0 {
		l.Memory = DefaultMemory
	}
	if l.Calls <= 0 {
		l.Calls = DefaultCalls
	}
	if l.Parallel <= 0 {
		l.Parallel = DefaultParallel
	}
	if l.DataBytes <= 0 {
		l.DataBytes = DefaultDataBytes
	}
	if l.ArgBytes <= 0 {
		l.ArgBytes = DefaultArgBytes
	}
	return l
}

// Error codes of a script that did not finish.
const (
	ErrSyntax    = "syntax"    // the script does not parse
	ErrException = "exception" // it threw (or returned a rejected promise)
	ErrTimeout   = "timeout"   // it ran past its deadline
	ErrMemory    = "memory"    // it ran out of its heap
	ErrCanceled  = "canceled"  // the caller went away
	ErrStalled   = "stalled"   // it waits on a promise nothing will settle
	ErrEngine    = "engine"    // the engine failed
)

// Error is why a script did not finish.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Step is one tool call a script made.
type Step struct {
	Tool string  `json:"tool"`
	OK   bool    `json:"ok"`
	Code string  `json:"error,omitempty"` // the error code when not OK
	Ms   float64 `json:"ms"`
}

// Result is what a script did.
type Result struct {
	ID       string            `json:"id"`
	Value    json.RawMessage   `json:"result,omitempty"` // what it returned; absent on error
	Emitted  []json.RawMessage `json:"emitted,omitempty"`
	Console  []string          `json:"console,omitempty"`
	Error    *Error            `json:"error,omitempty"`
	Trace    []Step            `json:"calls,omitempty"`
	Started  time.Time         `json:"-"`
	Duration time.Duration     `json:"-"`
	Source   string            `json:"-"`
}

// Outcome is the result's one-word outcome, for metrics: ok or the
// error's code.
func (r *Result) Outcome() string {
	if r.Error != nil {
		return r.Error.Code
	}
	return "ok"
}

// NewID returns a script ID for the audit log and the status page.
func NewID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "s-" + hex.EncodeToString(b[:])
}

// done is a finished call, to be settled in the script.
type done struct {
	id      int
	outcome []byte // a JS object literal (JSON)
}

// run is one script's state; the VM is used from Run's goroutine only.
type run struct {
	host  Host
	lim   Limits
	res   *Result
	ctx   context.Context
	slots chan struct{}
	done  chan done

	inflight int
	calls    int
	data     int
	console  int
	emitted  int
	finished bool

	wg   sync.WaitGroup // the call goroutines
	mu   sync.Mutex     // guards res.Trace, data and args (call goroutines)
	args int            // bytes of arguments held by calls in flight
}

// Run runs src — the body of an async function: it may await and
// return — with host's tools, within lim. It never returns nil.
func Run(ctx context.Context, id, src string, host Host, lim Limits) *Result {
	lim = lim.withDefaults()
	r := &run{
		host:  host,
		lim:   lim,
		res:   &Result{ID: id, Started: time.Now(), Source: src},
		slots: make(chan struct{}, lim.Parallel),
		done:  make(chan done, lim.Calls),
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	r.ctx = ctx
	r.exec(ctx, src)
	cancel() // ends calls the script left running
	r.wg.Wait()
	r.res.Duration = time.Since(r.res.Started)
	return r.res
}

func (r *run) fail(code, format string, a ...any) {
	if r.res.Error == nil {
		r.res.Error = &Error{Code: code, Message: fmt.Sprintf(format, a...)}
	}
}

func (r *run) exec(ctx context.Context, src string) {
	vm, err := quickjs.NewVM()
	if err != nil {
		r.setupError(ctx, "starting the engine", err)
		return
	}
	defer vm.Close()
	vm.SetMemoryLimit(uintptr(r.lim.Memory))
	stop := context.AfterFunc(ctx, vm.Interrupt)
	defer stop()
	if err := r.register(vm); err != nil {
		r.setupError(ctx, "setting up the script's API", err)
		return
	}
	if err := r.eval(vm, prelude); err != nil {
		r.setupError(ctx, "setting up the script's API", err)
		return
	}
	if err := r.eval(vm, "__mcpgw_run(async () => {\n"+src+"\n})"); err != nil {
		r.engineError(ctx, err, ErrSyntax)
		return
	}
	for {
		if err := r.jobs(vm); err != nil {
			r.engineError(ctx, err, ErrException)
			return
		}
		if r.finished {
			return
		}
		if r.inflight == 0 {
			r.fail(ErrStalled, "the script awaits a promise that nothing will settle (only tools.call promises settle)")
			return
		}
		select {
		case d := <-r.done:
			r.inflight--
			if err := r.eval(vm, fmt.Sprintf("__mcpgw_settle(%d, %s)", d.id, d.outcome)); err != nil {
				r.engineError(ctx, err, ErrException)
				return
			}
		case <-ctx.Done():
			r.ctxError(ctx)
			return
		}
	}
}

func (r *run) eval(vm *quickjs.VM, src string) error {
	if err := r.arm(vm); err != nil {
		return err
	}
	_, err := vm.Eval(src, quickjs.EvalGlobal)
	return err
}

func (r *run) jobs(vm *quickjs.VM) error {
	if err := r.arm(vm); err != nil {
		return err
	}
	_, err := vm.ExecutePendingJobs()
	return err
}

// arm gives the next entry into JavaScript what is left of the deadline.
func (r *run) arm(vm *quickjs.VM) error {
	// JavaScript may hold the CPU; other sessions still get their turns.
	rawio.WakeMonitor()
	if err := r.ctx.Err(); err != nil {
		return err
	}
	if dl, ok := r.ctx.Deadline(); ok {
		return vm.SetEvalTimeout(max(time.Until(dl), time.Millisecond))
	}
	return nil
}

// setupError reports a failure before the script's own code ran. Once ctx
// is done, whatever the engine said (an interrupt, a context error) is the
// cancellation or the deadline, whenever in the setup it came.
func (r *run) setupError(ctx context.Context, doing string, err error) {
	if ctx.Err() != nil {
		r.ctxError(ctx)
		return
	}
	r.fail(ErrEngine, "%s: %v", doing, err)
}

// engineError classifies an error out of the engine: the deadline, the
// caller, the memory cap, or the script's own (code).
func (r *run) engineError(ctx context.Context, err error, code string) {
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		r.ctxError(ctx)
		return
	}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "InternalError: out of memory"):
		r.fail(ErrMemory, "the script ran out of memory (limit %d MiB)", r.lim.Memory>>20)
	case strings.HasPrefix(msg, "InternalError: interrupted"):
		r.fail(ErrTimeout, "the script ran past its deadline of %v", r.lim.Timeout)
	default:
		r.fail(code, "%s", msg)
	}
}

func (r *run) ctxError(ctx context.Context) {
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		r.fail(ErrTimeout, "the script ran past its deadline of %v", r.lim.Timeout)
		return
	}
	r.fail(ErrCanceled, "the script was canceled")
}

func (r *run) register(vm *quickjs.VM) error {
	funcs := []struct {
		name string
		f    any
	}{
		{"__mcpgw_call", r.call},
		{"__mcpgw_search", r.search},
		{"__mcpgw_describe", r.describe},
		{"__mcpgw_emit", r.emit},
		{"__mcpgw_log", r.logLine},
		{"__mcpgw_finish", r.finish},
	}
	for _, f := range funcs {
		if err := vm.RegisterFunc(f.name, f.f, false); err != nil {
			return err
		}
	}
	return nil
}

// call starts one tool call; its outcome reaches the script through
// r.done and "" is returned. Past the call limit, or when its arguments
// would take the calls in flight past the argument budget, it returns the
// refusal (a JSON outcome) for the script to settle at once: the
// arguments are counted here, before a call holds them.
func (r *run) call(id int, name, args string) string {
	r.calls++
	if r.ctx.Err() != nil {
		// Past the deadline, or cancelled: the engine stops at its next
		// check, and no call starts meanwhile.
		return r.refuse(name, "the script ended")
	}
	if r.calls > r.lim.Calls {
		return r.refuse(name, fmt.Sprintf("the script made more than %d tool calls", r.lim.Calls))
	}
	r.mu.Lock()
	held := r.args
	if held+len(args) <= r.lim.ArgBytes {
		r.args += len(args)
	}
	r.mu.Unlock()
	if held+len(args) > r.lim.ArgBytes {
		return r.refuse(name, fmt.Sprintf("the arguments of the script's calls in flight would pass %d bytes (settings.scriptArgsBytes): "+
			"this call's are %d bytes, those in flight %d; await calls before making more", r.lim.ArgBytes, len(args), held))
	}
	r.inflight++
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer func() {
			r.mu.Lock()
			r.args -= len(args)
			r.mu.Unlock()
		}()
		select {
		case r.slots <- struct{}{}:
		case <-r.ctx.Done():
			r.settle(id, name, Outcome{Code: "canceled", Message: "the script ended"}, 0)
			return
		}
		start := time.Now()
		o := r.host.Call(r.ctx, name, json.RawMessage(args))
		<-r.slots
		r.settle(id, name, o, time.Since(start))
	}()
	return ""
}

// settle records the call in the trace and hands its outcome to the
// script. It runs on the call's goroutine; r.done has room for every
// call the limit allows.
func (r *run) settle(id int, name string, o Outcome, took time.Duration) {
	if o.OK && !json.Valid(o.Data) {
		o = Outcome{Code: "error", Message: "the tool's result is not JSON"}
	}
	if o.OK {
		r.mu.Lock()
		r.data += len(o.Data)
		over := r.data > r.lim.DataBytes
		r.mu.Unlock()
		if over {
			o = Outcome{Code: "data_limit", Message: fmt.Sprintf("the script's call results passed %d bytes (settings.scriptResultsBytes)", r.lim.DataBytes)}
		}
	}
	step := Step{Tool: name, OK: o.OK, Ms: float64(took.Microseconds()) / 1000}
	var lit []byte
	if o.OK {
		lit = append(append([]byte(`{"ok":true,"data":`), o.Data...), '}')
	} else {
		step.Code = o.Code
		e, _ := json.Marshal(Error{Code: o.Code, Message: o.Message})
		lit = append(append([]byte(`{"ok":false,"error":`), e...), '}')
	}
	r.mu.Lock()
	r.res.Trace = append(r.res.Trace, step)
	r.mu.Unlock()
	r.done <- done{id: id, outcome: lit}
}

// refuse records a call refused by a limit and returns its outcome.
func (r *run) refuse(name, msg string) string {
	r.mu.Lock()
	r.res.Trace = append(r.res.Trace, Step{Tool: name, Code: "limit"})
	r.mu.Unlock()
	e, _ := json.Marshal(Error{Code: "limit", Message: msg})
	return `{"ok":false,"error":` + string(e) + `}`
}

func (r *run) search(query string, offset, limit int) string {
	if limit <= 0 || limit > 50 {
		limit = 10
	}
	out := r.host.Search(query, max(offset, 0), limit)
	if out == nil {
		out = []Tool{}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func (r *run) describe(name string) string {
	t, ok := r.host.Describe(name)
	if !ok {
		return ""
	}
	b, _ := json.Marshal(t)
	return string(b)
}

func (r *run) emit(v string) {
	if r.emitted+len(v) > maxEmitted {
		r.logLine("warn", "emit: dropped a value past the emitted-data limit")
		return
	}
	r.emitted += len(v)
	r.res.Emitted = append(r.res.Emitted, json.RawMessage(v))
}

func (r *run) logLine(level, text string) {
	if r.console >= maxConsole {
		return
	}
	line := text
	if level != "log" && level != "info" {
		line = level + ": " + text
	}
	if left := maxConsole - r.console; len(line) > left {
		line = truncate(line, left) + "…"
	}
	r.console += len(line)
	r.res.Console = append(r.res.Console, line)
}

func (r *run) finish(ok bool, v string) {
	r.finished = true
	if ok {
		r.res.Value = json.RawMessage(v)
		return
	}
	// An interrupt or the memory cap inside the async body rejects its
	// promise like any exception: tell them apart.
	r.engineError(r.ctx, errors.New(v), ErrException)
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
