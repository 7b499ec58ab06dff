package dispatch

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/upstream"
)

// A call's outcome, as the metrics and the audit log name it, and a call
// that ended well names it without allocating.
func TestCallOutcome(t *testing.T) {
	live := context.Background()
	ended, cancel := context.WithCancel(live)
	cancel()
	timeout := fmt.Errorf("calling: %w", &upstream.TimeoutError{Server: "a", Op: "calling tool", After: time.Second})
	for _, tc := range []struct {
		ctx  context.Context
		res  *mcp.CallToolResult
		err  error
		want string
	}{
		{live, &mcp.CallToolResult{}, nil, "ok"},
		{live, nil, nil, "ok"},
		{live, &mcp.CallToolResult{IsError: true}, nil, "tool_error"},
		{live, nil, timeout, "timeout"},
		{live, nil, errors.New("broken pipe"), "error"},
		{ended, nil, timeout, "canceled"},
		{ended, &mcp.CallToolResult{}, nil, "ok"},
	} {
		if got := callOutcome(tc.ctx, tc.res, tc.err); got != tc.want {
			t.Errorf("callOutcome(ctx ended %v, %v, %v) = %q, want %q", tc.ctx.Err() != nil, tc.res, tc.err, got, tc.want)
		}
	}
	res := &mcp.CallToolResult{}
	if n := testing.AllocsPerRun(100, func() { callOutcome(live, res, nil) }); n != 0 {
		t.Errorf("an ok call's outcome made %v allocations, want 0", n)
	}
}
