package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Many sessions' calls share one stdio connection: raw calls, matched to
// their responses by the connection's own IDs, and the SDK's, by its. Each
// call gets its own answer, and none is lost.
func TestConcurrentCallsGetTheirOwnAnswers(t *testing.T) {
	t.Parallel()
	srv, _ := testServer(t, "load", nil)
	srv.MaxConcurrency = 32
	u := newPool(t, nil).Upstream(srv)
	const workers, calls = 16, 100
	var wg sync.WaitGroup
	errs := make(chan error, workers*calls)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				msg := fmt.Sprintf("worker %d call %d", w, i)
				args := json.RawMessage(fmt.Sprintf(`{"message":%q}`, msg))
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				var got string
				var err error
				if i%4 == 3 {
					// Progress takes the SDK's path.
					var res *mcp.CallToolResult
					res, err = u.Call(ctx, "echo", args, &CallOptions{OnProgress: func(context.Context, *mcp.ProgressNotificationParams) {}})
					if err == nil && len(res.Content) == 1 {
						if tc, ok := res.Content[0].(*mcp.TextContent); ok {
							got = tc.Text
						}
					}
				} else {
					var raw json.RawMessage
					raw, err = u.CallRaw(ctx, "echo", args, nil)
					var res struct {
						Content []struct{ Text string } `json:"content"`
					}
					if err == nil && json.Unmarshal(raw, &res) == nil && len(res.Content) == 1 {
						got = res.Content[0].Text
					}
				}
				cancel()
				if err != nil || got != msg {
					errs <- fmt.Errorf("%s: got %q, %v", msg, got, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 5 {
			t.Error(err)
		}
	}
	if n > 0 {
		t.Errorf("%d of %d calls did not get their own answer", n, workers*calls)
	}
}

// A raw call's ID is the connection's own, and what comes back under it
// reaches that call: its response (a response under an ID the connection
// never wrote reaches none), and, when the caller gives up, the upstream
// is told which request was cancelled, by the same ID.
func TestRawCallIDs(t *testing.T) {
	t.Parallel()
	inR, inW := io.Pipe()   // what the connection writes to the upstream
	outR, outW := io.Pipe() // what the upstream answers
	c := newLineConn(outR, inW, io.NopCloser(nil), slog.New(slog.DiscardHandler), nil)
	t.Cleanup(func() { outW.Close(); inR.Close() })
	sent := bufio.NewReader(inR)
	readSent := func() map[string]any {
		t.Helper()
		line, err := sent.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		return m
	}

	// Answered: a stray response under another ID first, then its own.
	type result struct {
		raw json.RawMessage
		err error
	}
	got := make(chan result, 1)
	go func() {
		raw, err := c.rawCall(context.Background(), "tools/call", []byte(`{"name":"echo"}`), time.Minute)
		got <- result{raw, err}
	}()
	req := readSent()
	id, _ := req["id"].(string)
	if !strings.HasPrefix(id, "mcpgw~") || req["method"] != "tools/call" {
		t.Fatalf("request %v: want a tools/call under an ID starting mcpgw~", req)
	}
	fmt.Fprintf(outW, `{"jsonrpc":"2.0","id":"mcpgw~999999","result":{"stray":true}}`+"\n")
	fmt.Fprintf(outW, `{"jsonrpc":"2.0","id":%q,"result":{"n":1}}`+"\n", id)
	select {
	case r := <-got:
		if r.err != nil || string(r.raw) != `{"n":1}` {
			t.Fatalf("call got %s, %v; want its own result {\"n\":1}", r.raw, r.err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the call never got its response")
	}

	// Given up: the cancellation names the request.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		raw, err := c.rawCall(ctx, "tools/call", []byte(`{"name":"sleep"}`), time.Minute)
		got <- result{raw, err}
	}()
	req = readSent()
	id2, _ := req["id"].(string)
	if id2 == id || !strings.HasPrefix(id2, "mcpgw~") {
		t.Fatalf("second request's ID %q: want a new one of the connection's (first %q)", id2, id)
	}
	cancel()
	note := readSent()
	params, _ := note["params"].(map[string]any)
	if note["method"] != "notifications/cancelled" || params["requestId"] != id2 {
		t.Errorf("after cancelling: %v; want notifications/cancelled for %q", note, id2)
	}
	if r := <-got; !errors.Is(r.err, context.Canceled) {
		t.Errorf("the cancelled call returned %s, %v", r.raw, r.err)
	}
	// Its late response reaches nobody, and the connection goes on.
	fmt.Fprintf(outW, `{"jsonrpc":"2.0","id":%q,"result":{"late":true}}`+"\n", id2)
	go func() {
		raw, err := c.rawCall(context.Background(), "ping", []byte(`{}`), time.Minute)
		got <- result{raw, err}
	}()
	req = readSent()
	id3, _ := req["id"].(string)
	fmt.Fprintf(outW, `{"jsonrpc":"2.0","id":%q,"result":{}}`+"\n", id3)
	if r := <-got; r.err != nil || string(r.raw) != `{}` {
		t.Errorf("the call after a late response got %s, %v; want {}", r.raw, r.err)
	}
}

// A raw call's ID reads back as its number without allocating; anything
// else is not one of the connection's. (Not parallel: AllocsPerRun.)
func TestRawIDNumber(t *testing.T) {
	for _, n := range []uint64{1, 99, 100, 18446744073709551615} {
		id := appendRawID(nil, n)
		if got, ok := rawIDNumber(id); !ok || got != n {
			t.Errorf("rawIDNumber(%s) = %d, %v; want %d", id, got, ok, n)
		}
	}
	for _, id := range []string{`"mcpgw~"`, `"mcpgw~12`, `"mcpgw~1a"`, `"mcpgw~-1"`, `"mcpgw~18446744073709551616"`, `5`, `"other"`} {
		if n, ok := rawIDNumber([]byte(id)); ok {
			t.Errorf("rawIDNumber(%s) = %d, ok; want not one of ours", id, n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { rawIDNumber([]byte(`"mcpgw~12345"`)) }); n != 0 {
		t.Errorf("rawIDNumber allocates %v times", n)
	}
}
