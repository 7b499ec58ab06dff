package runloop

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// An idle daemon settles settleStart after it starts; after that, once
// per burst of work, when settleQuiet has passed without a request. A
// connection that closes is work to hand back but not a request: it does
// not make the daemon wait settleQuiet again. A session that calls every
// 10 s (an agent between its model's turns) keeps it warm.
func TestSettleWhenIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var requests, freed, settled, firsts atomic.Uint64
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			settleWhenIdle(ctx, requests.Load, freed.Load, func(first bool) {
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
		requests.Add(1)           // a burst, seen at S+15
		at(32*time.Second, 1)     // S+44.001: quiet for 29 s of looks
		freed.Add(1)              // its connections close
		at(time.Second, 2)        // S+45.001: 30 s
		freed.Add(1)              // another, later
		at(5*time.Second, 3)      // S+50.001: handed back at once
		// An agent's turns, 10 s apart for two minutes: never quiet
		// for long enough.
		for range 12 {
			requests.Add(1)
			at(10*time.Second, 3)
		} // S+170.001; the last seen at S+165
		at(24*time.Second, 3) // S+194.001
		at(time.Second, 4)    // S+195.001: quiet for 30 s
		at(time.Minute, 4)    // nothing to hand back: no work since
		cancel()
		<-done
		if firsts.Load() != 1 {
			t.Errorf("%d settles were told they were the first; want 1", firsts.Load())
		}
	})
}
