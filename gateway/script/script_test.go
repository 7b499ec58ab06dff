package script

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeHost answers echo (its args back), fail (a tool error) and block
// (until the call's context ends); gate, when set, holds echo calls.
type fakeHost struct {
	mu       sync.Mutex
	calls    []string
	inflight atomic.Int32
	max      atomic.Int32
	gate     func(n int32)
}

func (h *fakeHost) Call(ctx context.Context, name string, args json.RawMessage) Outcome {
	h.mu.Lock()
	h.calls = append(h.calls, name)
	h.mu.Unlock()
	n := h.inflight.Add(1)
	defer h.inflight.Add(-1)
	for {
		m := h.max.Load()
		if n <= m || h.max.CompareAndSwap(m, n) {
			break
		}
	}
	switch name {
	case "echo":
		if h.gate != nil {
			h.gate(n)
		}
		return Outcome{OK: true, Data: args}
	case "text":
		return Outcome{OK: true, Data: json.RawMessage(`"plain text"`)}
	case "block":
		<-ctx.Done()
		return Outcome{Code: "canceled", Message: ctx.Err().Error()}
	}
	return Outcome{Code: "tool_error", Message: "no tool " + name}
}

func (h *fakeHost) Search(query string, offset, limit int) []Tool {
	all := []Tool{{Name: "echo", Server: "s", Signature: "echo(args: { message: string }): unknown"}, {Name: "text", Server: "s"}}
	return all[min(offset, len(all)):min(offset+limit, len(all))]
}

func (h *fakeHost) Describe(name string) (Tool, bool) {
	if name != "echo" {
		return Tool{}, false
	}
	return Tool{Name: "echo", Server: "s", Signature: "echo(args: { message: string }): unknown", Parameters: "{\n  message: string;\n}"}, true
}

func runJS(t *testing.T, h Host, lim Limits, src string) *Result {
	t.Helper()
	if h == nil {
		h = &fakeHost{}
	}
	return Run(context.Background(), "s-test", src, h, lim)
}

func wantOK(t *testing.T, r *Result, value string) {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("script failed: %+v", r.Error)
	}
	if string(r.Value) != value {
		t.Fatalf("result = %s, want %s", r.Value, value)
	}
}

func wantErr(t *testing.T, r *Result, code, text string) {
	t.Helper()
	if r.Error == nil || r.Error.Code != code || !strings.Contains(r.Error.Message, text) {
		t.Fatalf("error = %+v, want code %s containing %q", r.Error, code, text)
	}
	if r.Value != nil {
		t.Errorf("a failed script has a result: %s", r.Value)
	}
}

func TestCallsCombineAndTrace(t *testing.T) {
	h := &fakeHost{}
	r := runJS(t, h, Limits{}, `
		const a = await tools.call("echo", {n: 1});
		const b = await tools.call("text");
		const c = await tools.call("nope", {});
		console.log("got", a.data.n, {x: 1});
		console.error("careful");
		emit({step: 1});
		return {sum: a.data.n + 1, b: b.data, failed: c.ok, code: c.error.code, msg: c.error.message};`)
	wantOK(t, r, `{"sum":2,"b":"plain text","failed":false,"code":"tool_error","msg":"no tool nope"}`)
	if got := fmt.Sprint(r.Console); got != `[got 1 {"x":1} error: careful]` {
		t.Errorf("console = %s", got)
	}
	if len(r.Emitted) != 1 || string(r.Emitted[0]) != `{"step":1}` {
		t.Errorf("emitted = %s", r.Emitted)
	}
	if len(r.Trace) != 3 || r.Trace[0].Tool != "echo" || !r.Trace[0].OK || r.Trace[2].OK || r.Trace[2].Code != "tool_error" {
		t.Errorf("trace = %+v", r.Trace)
	}
	if r.ID != "s-test" || r.Outcome() != "ok" {
		t.Errorf("id %s outcome %s", r.ID, r.Outcome())
	}
}

func TestParallelCallsAreBounded(t *testing.T) {
	// The first three calls wait until three are in flight together, so
	// the script only finishes if calls do run in parallel; none may
	// see more than three.
	all := make(chan struct{})
	var once sync.Once
	h := &fakeHost{}
	h.gate = func(n int32) {
		if n >= 3 {
			once.Do(func() { close(all) })
		}
		<-all
	}
	r := runJS(t, h, Limits{Parallel: 3, Timeout: time.Minute}, `
		const rs = await Promise.all(Array.from({length: 9}, (_, i) => tools.call("echo", {i})));
		return rs.map(r => r.data.i);`)
	wantOK(t, r, `[0,1,2,3,4,5,6,7,8]`)
	if m := h.max.Load(); m != 3 {
		t.Errorf("at most %d calls in flight, want 3", m)
	}
	if len(r.Trace) != 9 {
		t.Errorf("trace has %d calls, want 9", len(r.Trace))
	}
}

func TestBusyLoopStopsAtTheDeadline(t *testing.T) {
	r := runJS(t, nil, Limits{Timeout: 300 * time.Millisecond}, `while (true) {}`)
	wantErr(t, r, ErrTimeout, "deadline of 300ms")
	r = runJS(t, nil, Limits{Timeout: 300 * time.Millisecond}, `await tools.call("echo", {}); for (;;) { try { while (true) {} } catch (e) {} }`)
	wantErr(t, r, ErrTimeout, "deadline")
}

func TestMemoryIsCapped(t *testing.T) {
	r := runJS(t, nil, Limits{Memory: 8 << 20}, `const a = []; for (;;) a.push("x".repeat(1 << 16) + a.length);`)
	wantErr(t, r, ErrMemory, "limit 8 MiB")
	// The same script's engine is gone; the next one starts afresh.
	wantOK(t, runJS(t, nil, Limits{Memory: 8 << 20}, `return "x".repeat(1 << 20).length`), `1048576`)
}

func TestSandboxHasNoWayOut(t *testing.T) {
	r := runJS(t, nil, Limits{}, `
		const kinds = ["require", "process", "std", "os", "fetch", "setTimeout", "XMLHttpRequest", "Deno", "Bun", "__mcpgw_call", "__mcpgw_finish"]
			.map(k => k + ":" + typeof globalThis[k]);
		let imp;
		try { await import("os"); imp = "imported"; } catch (e) { imp = "refused"; }
		return {kinds, imp, fn: new Function("return 1+1")()};`)
	wantOK(t, r, `{"kinds":["require:undefined","process:undefined","std:undefined","os:undefined","fetch:undefined","setTimeout:undefined","XMLHttpRequest:undefined","Deno:undefined","Bun:undefined","__mcpgw_call:undefined","__mcpgw_finish:undefined"],"imp":"refused","fn":2}`)
}

func TestScriptErrors(t *testing.T) {
	wantErr(t, runJS(t, nil, Limits{}, `return (`), ErrSyntax, "SyntaxError")
	wantErr(t, runJS(t, nil, Limits{}, `await tools.call("echo"); throw new Error("nope")`), ErrException, "Error: nope")
	wantErr(t, runJS(t, nil, Limits{}, `await new Promise(() => {})`), ErrStalled, "nothing will settle")
	wantErr(t, runJS(t, nil, Limits{}, `return 10n`), ErrException, "not JSON")
	wantOK(t, runJS(t, nil, Limits{}, `const x = 1`), `null`)
}

func TestCallLimits(t *testing.T) {
	r := runJS(t, nil, Limits{Calls: 3}, `
		const rs = [];
		for (let i = 0; i < 5; i++) rs.push(await tools.call("echo", {i}));
		return rs.map(r => r.ok ? r.data.i : r.error.code);`)
	wantOK(t, r, `[0,1,2,"limit","limit"]`)
	r = runJS(t, nil, Limits{DataBytes: 100}, `
		const big = "y".repeat(60);
		const a = await tools.call("echo", {big});
		const b = await tools.call("echo", {big});
		return [a.ok, b.ok, b.ok || b.error.code];`)
	wantOK(t, r, `[true,false,"data_limit"]`)
	// {"big":"yyy…"} is 50 bytes: two calls in flight fit in 100, the
	// third is refused before it holds its arguments; calls that are
	// done hold nothing.
	h := &fakeHost{}
	r = runJS(t, h, Limits{ArgBytes: 100}, `
		const big = "y".repeat(40);
		tools.call("block", {big});
		tools.call("block", {big});
		const third = await tools.call("echo", {big});
		return third.ok || third.error.message;`)
	wantOK(t, r, `"the arguments of the script's calls in flight would pass 100 bytes (settings.scriptArgsBytes): this call's are 50 bytes, those in flight 100; await calls before making more"`)
	// The refused call never reaches the host. The two blocked ones may
	// not have either: the script's end cancels them, maybe before their
	// goroutines ran.
	h.mu.Lock()
	reached := slices.Clone(h.calls)
	h.mu.Unlock()
	if len(reached) > 2 || slices.Contains(reached, "echo") {
		t.Errorf("calls that reached the host: %v, want at most the two blocked ones", reached)
	}
	r = runJS(t, nil, Limits{ArgBytes: 100}, `
		const big = "y".repeat(40);
		const rs = [];
		for (let i = 0; i < 3; i++) rs.push(await tools.call("echo", {big}));
		return rs.map(r => r.ok);`)
	wantOK(t, r, `[true,true,true]`)
	r = runJS(t, nil, Limits{}, `return [await tools.call(""), await tools.call("echo", {f: 1n})].map(r => r.error.code)`)
	wantOK(t, r, `["invalid_args","invalid_args"]`)
}

func TestCancelStopsTheScriptAndItsCalls(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h := &fakeHost{}
	started := make(chan struct{})
	go func() {
		for h.inflight.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		close(started)
		cancel()
	}()
	r := Run(ctx, "s-c", `return await tools.call("block", {})`, h, Limits{Timeout: time.Minute})
	<-started
	wantErr(t, r, ErrCanceled, "canceled")
	if n := h.inflight.Load(); n != 0 {
		t.Errorf("%d calls still in flight after Run returned", n)
	}
	// A busy script is interrupted too.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	wantErr(t, Run(ctx, "s-c2", `while (true) {}`, h, Limits{Timeout: time.Minute}), ErrCanceled, "canceled")
}

// TestCancelBeforeTheScriptRuns cancels while the engine and the script's
// API are still being set up: the result is canceled, not an engine error
// ("setting up the script's API: InternalError: interrupted" before).
func TestCancelBeforeTheScriptRuns(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h := &fakeHost{}
	r := Run(ctx, "s-c0", `return await tools.call("echo", {})`, h, Limits{Timeout: time.Minute})
	wantErr(t, r, ErrCanceled, "canceled")
	if len(r.Trace) != 0 {
		t.Errorf("a canceled script made %d calls: %+v", len(r.Trace), r.Trace)
	}
	// A deadline already passed is a timeout, not an engine error.
	ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	wantErr(t, Run(ctx, "s-t0", `return 1`, h, Limits{Timeout: time.Minute}), ErrTimeout, "deadline")
}

func TestSearchAndDescribe(t *testing.T) {
	r := runJS(t, nil, Limits{}, `
		const hits = tools.search("echo things", {limit: 1});
		const d = tools.describe(hits[0].name);
		const rest = tools.search("echo things", {offset: 1}).map(h => h.name);
		return {n: hits.length, rest, sig: hits[0].signature, params: d.parameters, missing: tools.describe("nope")};`)
	wantOK(t, r, `{"n":1,"rest":["text"],"sig":"echo(args: { message: string }): unknown","params":"{\n  message: string;\n}","missing":null}`)
}
