package upstream

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// memDialer connects to in-process test servers over in-memory pipes, so
// timer-driven behaviour can run under testing/synctest.
type memDialer struct {
	protocols []string // the servers' (nil: every version the SDK speaks)

	dials atomic.Int32
	fail  atomic.Pointer[error] // when set, dials fail with it

	mu      sync.Mutex
	servers []*mcp.ServerSession
	hang    atomic.Bool // servers stop answering ping and tools/list
}

func (d *memDialer) dial(ctx context.Context, _ *Upstream, _ *registry.Server, o dialOptions) (*session, error) {
	d.dials.Add(1)
	if err := d.fail.Load(); err != nil {
		return nil, *err
	}
	ct, st := mcp.NewInMemoryTransports()
	srv := fakeupstream.NewServer(&fakeupstream.Options{Exit: func(int) {}, Protocols: d.protocols})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if d.hang.Load() && (method == "ping" || method == "tools/list") {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return next(ctx, method, req)
		}
	})
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.servers = append(d.servers, ss)
	d.mu.Unlock()
	kt := &keptTransport{Transport: ct}
	cs, err := o.client.Connect(ctx, kt, o.sessionOptions())
	if err != nil {
		ss.Close()
		return nil, err
	}
	return &session{cs: cs, kind: "memory", conn: kt.conn}, nil
}

// dropLast closes the server side of the newest connection, as a crash would.
func (d *memDialer) dropLast() {
	d.mu.Lock()
	ss := d.servers[len(d.servers)-1]
	d.mu.Unlock()
	ss.Close()
}

func (d *memDialer) setFail(err error) {
	if err == nil {
		d.fail.Store(nil)
		return
	}
	d.fail.Store(&err)
}

func memPool(opts *Options) (*Pool, *memDialer) {
	p := New(opts)
	d := &memDialer{}
	p.dial = d.dial
	return p, d
}

func memServer(name string) *registry.Server {
	return &registry.Server{Name: name, Command: "in-memory", Hash: name, Lifecycle: registry.LifecycleLazy}
}

func TestIdleCloseNeverDuringCall(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, d := memPool(nil)
		defer p.Close()
		srv := memServer("lazy")
		srv.IdleTimeout = time.Minute
		srv.RequestTimeout = time.Hour
		u := p.Upstream(srv)
		call(t, u, "echo", map[string]any{"message": "x"})

		// A call lasting five idle timeouts keeps the connection.
		done := make(chan error, 1)
		go func() {
			_, err := u.Call(context.Background(), "sleep", map[string]any{"ms": 5 * 60 * 1000}, nil)
			done <- err
		}()
		time.Sleep(4 * time.Minute)
		synctest.Wait()
		if st := u.Status(); st.State != StateConnected || st.IdleCloses != 0 || st.InFlight != 1 {
			t.Fatalf("during a long call: %+v, want connected, 0 idle closes, 1 in flight", st)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		// The idle clock starts when the call ends.
		time.Sleep(time.Minute - time.Second)
		synctest.Wait()
		if st := u.Status(); st.State != StateConnected {
			t.Fatalf("59s after the call: %s, want connected", st.State)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		st := u.Status()
		if st.State != StateIdle || st.IdleCloses != 1 || st.PID != 0 {
			t.Fatalf("after the idle timeout: %+v, want idle with 1 idle close", st)
		}
		// Next use reconnects.
		call(t, u, "echo", map[string]any{"message": "x"})
		if n := d.dials.Load(); n != 2 {
			t.Errorf("dials = %d, want 2", n)
		}
		if st := u.Status(); st.Connects != 2 || st.State != StateConnected {
			t.Errorf("after reuse: %+v", st)
		}
	})
}

func TestIdleCloseByLifecycle(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, _ := memPool(nil)
		defer p.Close()
		eager := memServer("eager") // the registry leaves IdleTimeout 0 unless configured
		eager.Lifecycle = registry.LifecycleEager
		eagerIdle := memServer("eager-idle")
		eagerIdle.Lifecycle = registry.LifecycleEager
		eagerIdle.IdleTimeout = time.Minute
		keep := memServer("keep-alive")
		keep.Lifecycle = registry.LifecycleKeepAlive
		keep.IdleTimeout = time.Minute // ignored
		never := memServer("lazy-never")
		p.Reconcile([]*registry.Server{eager, eagerIdle, keep, never})
		call(t, p.Upstream(never), "echo", map[string]any{"message": "x"})
		time.Sleep(time.Hour)
		synctest.Wait()
		want := map[string]State{"eager": StateConnected, "eager-idle": StateIdle, "keep-alive": StateConnected, "lazy-never": StateConnected}
		for _, st := range p.Status() {
			if st.State != want[st.Name] {
				t.Errorf("%s after an hour: %+v, want %s", st.Name, st, want[st.Name])
			}
		}
	})
}

func TestIdleTimeoutChangeApplies(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, _ := memPool(nil)
		defer p.Close()
		srv := memServer("lazy")
		srv.IdleTimeout = time.Hour
		u := p.Upstream(srv)
		call(t, u, "echo", map[string]any{"message": "x"})
		time.Sleep(2 * time.Minute)
		shorter := *srv
		shorter.IdleTimeout = time.Minute
		p.Upstream(&shorter) // already idle longer than the new timeout
		synctest.Wait()
		if st := u.Status(); st.State != StateIdle || st.IdleCloses != 1 {
			t.Errorf("after shortening the idle timeout: %+v, want idle", st)
		}
	})
}

// Every call looks its upstream up with the server it already follows:
// that keeps the idle timer running rather than making a new one per call,
// and the upstream still closes when the timeout has passed.
func TestLookupKeepsTheIdleTimer(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, _ := memPool(nil)
		defer p.Close()
		srv := memServer("lazy")
		srv.IdleTimeout = time.Hour
		u := p.Upstream(srv)
		call(t, u, "echo", map[string]any{"message": "x"})
		idle := func() *time.Timer {
			u.mu.Lock()
			defer u.mu.Unlock()
			return u.idle
		}
		timer := idle()
		if timer == nil {
			t.Fatal("no idle timer after a call")
		}
		for range 3 {
			time.Sleep(10 * time.Minute)
			if got := p.Upstream(srv); got != u {
				t.Fatalf("Upstream(srv) = %p, want %p", got, u)
			}
			if got := idle(); got != timer {
				t.Fatalf("the lookup replaced the idle timer %p with %p", timer, got)
			}
		}
		time.Sleep(31 * time.Minute)
		synctest.Wait()
		if st := u.Status(); st.State != StateIdle || st.IdleCloses != 1 {
			t.Errorf("an hour after the call: %+v, want idle", st)
		}
	})
}

func TestBackoffGrowsAndCaps(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		p, d := memPool(rec.options(nil))
		defer p.Close()
		d.setFail(errors.New("connection refused"))
		u := p.Upstream(memServer("down"))
		ctx := context.Background()

		var waits []time.Duration
		for i := 1; i <= 12; i++ {
			start := time.Now()
			if _, err := u.Call(ctx, "echo", nil, nil); err == nil || !strings.Contains(err.Error(), "connection refused") {
				t.Fatalf("attempt %d: %v, want the dial error", i, err)
			}
			if n := d.dials.Load(); n != int32(i) {
				t.Fatalf("attempt %d: %d dials", i, n)
			}
			st := u.Status()
			wait := st.NextRetry.Sub(start)
			want := min(2*time.Second<<(i-1), 5*time.Minute)
			if st.State != StateFailed || wait <= want*8/10 || wait > want {
				t.Fatalf("attempt %d: state %s, next retry in %v, want (%v, %v]", i, st.State, wait, want*8/10, want)
			}
			waits = append(waits, wait)

			// While backing off, calls fail fast and dial nothing.
			_, err := u.Call(ctx, "echo", nil, nil)
			var be *BackoffError
			if !errors.As(err, &be) || be.Failures != i || !be.NextRetry.Equal(st.NextRetry) {
				t.Fatalf("attempt %d: call while backing off: %v", i, err)
			}
			time.Sleep(time.Until(st.NextRetry) - time.Millisecond)
			if _, err := u.Call(ctx, "echo", nil, nil); !errors.Is(err, ErrBackingOff) {
				t.Fatalf("attempt %d: 1ms before the retry: %v, want ErrBackingOff", i, err)
			}
			if n := d.dials.Load(); n != int32(i) {
				t.Fatalf("attempt %d: dialled while backing off (%d dials)", i, n)
			}
			time.Sleep(time.Millisecond)
		}
		t.Logf("backoff waits: %v", waits)

		// Connect bypasses the wait.
		start := time.Now()
		if _, err := u.Connect(ctx); err == nil {
			t.Fatal("Connect succeeded while the dial fails")
		}
		if n := d.dials.Load(); n != 13 {
			t.Errorf("Connect did not dial (dials = %d)", n)
		}
		// A success clears the backoff.
		d.setFail(nil)
		if _, err := u.Connect(ctx); err != nil {
			t.Fatal(err)
		}
		if st := u.Status(); st.State != StateConnected || !st.NextRetry.IsZero() || st.LastError != "" || time.Since(start) != 0 {
			t.Errorf("after a successful Connect: %+v", st)
		}
		call(t, u, "echo", map[string]any{"message": "x"})
	})
}

func TestBackoffDelays(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]time.Duration{
		1: 2 * time.Second, 2: 4 * time.Second, 3: 8 * time.Second, 8: 256 * time.Second,
		9: 5 * time.Minute, 40: 5 * time.Minute, 1000: 5 * time.Minute,
	} {
		for range 100 {
			if d := backoff(n); d <= want*8/10 || d > want {
				t.Fatalf("backoff(%d) = %v, want in (%v, %v]", n, d, want*8/10, want)
			}
		}
	}
	if d := backoff(0); d != 0 {
		t.Errorf("backoff(0) = %v", d)
	}
}

func TestKeepAliveReconnectsAndHealthChecks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, d := memPool(nil)
		defer p.Close()
		srv := memServer("ka")
		srv.Lifecycle = registry.LifecycleKeepAlive
		srv.IdleTimeout = time.Minute // ignored for keep-alive
		p.Reconcile([]*registry.Server{srv})
		synctest.Wait()
		u := p.Upstream(srv)
		if st := u.Status(); st.State != StateConnected || d.dials.Load() != 1 {
			t.Fatalf("keep-alive at start: %+v, %d dials", st, d.dials.Load())
		}

		// The server goes away: reconnected at once, without a call.
		time.Sleep(time.Hour) // long-lived connection; no idle close
		d.dropLast()
		synctest.Wait()
		if st := u.Status(); st.State != StateConnected || st.Connects != 2 || d.dials.Load() != 2 {
			t.Fatalf("after the server dropped: %+v, %d dials; want reconnected", st, d.dials.Load())
		}

		// The server stops answering: the health check notices, reconnects.
		d.hang.Store(true)
		time.Sleep(healthInterval + healthTimeout)
		d.hang.Store(false)
		synctest.Wait()
		if st := u.Status(); st.State != StateConnected || st.Connects != 3 {
			t.Fatalf("after a failed health check: %+v, want a third connect", st)
		}

		// Quick successive losses back off instead of spinning.
		d.setFail(errors.New("refused"))
		d.dropLast()
		synctest.Wait()
		if st := u.Status(); st.State != StateFailed || st.NextRetry.IsZero() {
			t.Fatalf("dial failing: %+v, want failed with a next retry", st)
		}
		dials := d.dials.Load()
		time.Sleep(time.Second)
		synctest.Wait()
		if d.dials.Load() != dials {
			t.Errorf("redialled within the backoff")
		}
		d.setFail(nil)
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if st := u.Status(); st.State != StateConnected {
			t.Errorf("after the backoff: %+v, want connected", st)
		}
	})
}

func TestRequestTimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, _ := memPool(nil)
		defer p.Close()
		slow := memServer("slow")
		slow.RequestTimeout = 30 * time.Second
		fast := memServer("fast")
		us, uf := p.Upstream(slow), p.Upstream(fast)
		call(t, uf, "echo", map[string]any{"message": "x"})

		errc := make(chan error, 1)
		start := time.Now()
		go func() {
			_, err := us.Call(context.Background(), "sleep", map[string]any{"ms": 3600 * 1000}, nil)
			errc <- err
		}()
		synctest.Wait()
		// The hung upstream does not hold up another.
		if got := call(t, uf, "echo", map[string]any{"message": "meanwhile"}); got != "meanwhile" {
			t.Errorf("other upstream: %q", got)
		}
		err := <-errc
		var te *TimeoutError
		if !errors.As(err, &te) || te.After != 30*time.Second || te.Server != "slow" || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want a 30s TimeoutError", err)
		}
		if took := time.Since(start); took != 30*time.Second {
			t.Errorf("took %v, want 30s", took)
		}
		if want := `upstream "slow": calling tool "sleep" timed out after 30s`; err.Error() != want {
			t.Errorf("message = %q, want %q", err, want)
		}
		// The connection stays usable.
		call(t, us, "echo", map[string]any{"message": "x"})
		if st := us.Status(); st.Connects != 1 || st.Errors != 1 {
			t.Errorf("status = %+v, want 1 connect, 1 error", st)
		}
	})
}

func TestStartupTimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, _ := memPool(nil)
		defer p.Close()
		p.dial = func(ctx context.Context, _ *Upstream, _ *registry.Server, _ dialOptions) (*session, error) {
			<-ctx.Done() // a server that never answers initialize
			return nil, ctx.Err()
		}
		srv := memServer("hung")
		srv.StartupTimeout = 5 * time.Second
		u := p.Upstream(srv)
		_, err := u.Call(context.Background(), "echo", nil, nil)
		var te *TimeoutError
		if !errors.As(err, &te) || te.Op != "connect" || te.After != 5*time.Second {
			t.Fatalf("err = %v, want a connect TimeoutError after 5s", err)
		}
		if st := u.Status(); st.State != StateFailed || !strings.Contains(st.LastError, "timed out after 5s") {
			t.Errorf("status = %+v", st)
		}
	})
}

func TestCallerCancelDoesNotAbortSharedConnect(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, d := memPool(nil)
		defer p.Close()
		gate := make(chan struct{})
		inner := p.dial
		p.dial = func(ctx context.Context, u *Upstream, srv *registry.Server, o dialOptions) (*session, error) {
			<-gate
			return inner(ctx, u, srv, o)
		}
		u := p.Upstream(memServer("slowstart"))
		ctx, cancel := context.WithCancel(context.Background())
		first := make(chan error, 1)
		go func() {
			_, err := u.Call(ctx, "echo", map[string]any{"message": "x"}, nil)
			first <- err
		}()
		second := make(chan error, 1)
		go func() {
			_, err := u.Call(context.Background(), "echo", map[string]any{"message": "x"}, nil)
			second <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-first; !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled caller: %v", err)
		}
		close(gate)
		if err := <-second; err != nil {
			t.Errorf("other caller: %v", err)
		}
		if n := d.dials.Load(); n != 1 {
			t.Errorf("dials = %d, want 1", n)
		}
	})
}
