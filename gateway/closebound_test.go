package gateway

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/registry"
)

// A goroutine of the Hub's that does not end cannot hold the daemon's
// stop: Close gives up on it after closeWait and logs what was still
// running, its stack included.
//
// Not parallel: it shortens closeWait, which every Close reads.
func TestCloseIsBounded(t *testing.T) {
	defer func(d time.Duration) { closeWait = d }(closeWait)
	closeWait = 50 * time.Millisecond
	var logs lockedBuffer
	gw := New(&registry.Config{Servers: map[string]*registry.Server{}}, &Options{NoBootstrap: true,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	gw.Start()
	stuck := make(chan struct{})
	gw.wg.Add(1) // as a session whose transport never says it ended
	go func() {
		defer gw.wg.Done()
		stuckInTheHub(stuck)
	}()
	defer close(stuck)

	closed := make(chan error, 1)
	go func() { closed <- gw.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Close waited for a goroutine that does not end")
	}
	out := logs.String()
	for _, want := range []string{"level=ERROR", "did not end in time", "after=50ms", "sessions=0", "stuckInTheHub"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log does not say %q:\n%s", want, out)
		}
	}
}

// stuckInTheHub waits until stuck is closed: its name is what the log
// must show.
//
//go:noinline
func stuckInTheHub(stuck chan struct{}) { <-stuck }
