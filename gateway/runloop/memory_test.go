package runloop

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// An idle daemon settles settleStart after it starts, not settleIdle;
// after that, once per burst of work, when settleIdle has passed without
// a request.
func TestSettleWhenIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var requests, settled, firsts atomic.Uint64
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			settleWhenIdle(ctx, requests.Load, func(first bool) {
				if settled.Add(1) == 1 != first {
					t.Errorf("settle %d: first = %v", settled.Load(), first)
				}
				if first {
					firsts.Add(1)
				}
			})
		}()
		at := func(d time.Duration, want uint64) {
			t.Helper()
			time.Sleep(d)
			synctest.Wait()
			if got := settled.Load(); got != want {
				t.Fatalf("settled %d times at +%v; want %d", got, d, want)
			}
		}
		// The looks are at S = settleStart, S+5 s, S+10 s…; the test's
		// steps fall between them.
		at(settleStart-time.Millisecond, 0)
		at(2*time.Millisecond, 1) // S+0.001: start-up is over
		at(12*time.Second, 1)     // S+12.001: nothing happened since
		requests.Add(1)           // a burst
		at(settleIdle, 1)         // S+17.001: seen at S+15
		at(settleIdle, 2)         // S+22.001: over at S+20
		requests.Add(1)           // another
		at(settleIdle, 2)         // S+27.001: seen at S+25
		requests.Add(1)           // and it goes on
		at(settleIdle, 2)         // S+32.001: still busy at S+30
		at(settleIdle, 3)         // S+37.001: over at S+35
		cancel()
		<-done
		if firsts.Load() != 1 {
			t.Errorf("%d settles were told they were the first; want 1", firsts.Load())
		}
	})
}
