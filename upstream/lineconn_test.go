package upstream

import (
	"context"
	"encoding/json"
	"fmt"
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
