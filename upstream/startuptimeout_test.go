package upstream

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// A server that never answers initialize fails its connect when the
// startup timeout ends, not when its process has been stopped too: the
// stop (up to several seconds for a process that ignores its closed
// stdin) happens in the background.
func TestStartupTimeoutIsOnTime(t *testing.T) {
	srv, _ := testServer(t, "slow", map[string]string{fakeupstream.EnvStartDelay: "60000"})
	srv.StartupTimeout = 300 * time.Millisecond
	p := newPool(t, nil)
	start := time.Now()
	_, err := p.Upstream(srv).Connect(context.Background())
	took := time.Since(start)
	var te *TimeoutError
	if !errors.As(err, &te) || te.Op != "connect" {
		t.Fatalf("connect: %v, want a connect timeout", err)
	}
	// The bound is generous for a loaded machine; the defect was 5 s late.
	if took > 3*time.Second {
		t.Errorf("the connect timeout of 300ms was reported after %s", took.Round(time.Millisecond))
	}
}

// CallOptions.Timeout bounds a call instead of the upstream's request
// timeout: two config entries sharing one upstream keep their own.
func TestCallTimeoutOption(t *testing.T) {
	t.Parallel()
	srv, _ := testServer(t, "shared", nil)
	srv.RequestTimeout = time.Minute
	u := newPool(t, nil).Upstream(srv)
	_, err := u.Call(context.Background(), "sleep", map[string]any{"ms": 20000}, &CallOptions{Timeout: 300 * time.Millisecond})
	var te *TimeoutError
	if !errors.As(err, &te) || te.After != 300*time.Millisecond {
		t.Fatalf("call with a 300ms timeout: %v", err)
	}
}
