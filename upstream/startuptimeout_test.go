package upstream

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/upstream/upstreamtest"
)

// A server that never answers initialize fails its connect when the
// startup timeout ends, not when its process has been stopped too: the
// stop (up to several seconds for a process that ignores its closed
// stdin) happens in the background.
func TestStartupTimeoutIsOnTime(t *testing.T) {
	srv, _ := testServer(t, "slow", map[string]string{upstreamtest.EnvStartDelay: "60000"})
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
