//go:build unix

package upstream

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/registry"
)

func TestReconcile(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	p := newPool(t, rec.options(nil))
	keep, _ := testServer(t, "keep", nil)
	drop, _ := testServer(t, "drop", nil)
	eager, eagerPIDs := testServer(t, "eager", nil)
	eager.Lifecycle = registry.LifecycleEager

	p.Reconcile([]*registry.Server{keep, drop})
	uk, ud := p.Upstream(keep), p.Upstream(drop)
	keepPID := call(t, uk, "pid", nil)
	dropPID := atoi(t, call(t, ud, "pid", nil))

	// A call in flight on the removed server finishes before it closes.
	done := make(chan error, 1)
	go func() {
		res, err := ud.Call(context.Background(), "sleep", map[string]any{"ms": 300}, nil)
		if err == nil && textOf(t, res) != "slept 300 ms" {
			err = errors.New("unexpected result " + textOf(t, res))
		}
		done <- err
	}()
	waitInFlight(t, ud, 1)

	keep2 := *keep // same identity, new behaviour fields
	keep2.RequestTimeout = 3 * time.Minute
	p.Reconcile([]*registry.Server{&keep2, eager})
	if err := <-done; err != nil {
		t.Errorf("in-flight call on the removed server: %v", err)
	}
	waitGone(t, dropPID)
	if st := ud.Status(); st.State != StateClosed {
		t.Errorf("removed upstream state = %s, want closed", st.State)
	}
	if _, err := ud.Call(context.Background(), "pid", nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call on removed upstream: %v, want ErrClosed", err)
	}
	if p.Upstream(&keep2) != uk || call(t, uk, "pid", nil) != keepPID {
		t.Error("unchanged server was restarted")
	}
	// The eager server connects without a call.
	rec.waitFor(t, "the eager server to connect", func(states []Status, _ []*Snapshot) bool {
		for _, s := range states {
			if s.Name == "eager" && s.State == StateConnected {
				return true
			}
		}
		return false
	})
	if ps := pids(t, eagerPIDs); len(ps) != 1 {
		t.Errorf("eager processes = %v, want 1", ps)
	}
	var names []string
	for _, st := range p.Status() {
		names = append(names, st.Name+":"+string(st.State))
	}
	if want := []string{"eager:connected", "keep:connected"}; len(names) != 2 || names[0] != want[0] || names[1] != want[1] {
		t.Errorf("pool status = %v, want %v", names, want)
	}
}
