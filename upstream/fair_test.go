package upstream

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestFairGate: at the limit, waiting calls are admitted round-robin across
// sessions, each session's in order; a call whose context ends while
// waiting leaves the queue without taking a slot.
func TestFairGate(t *testing.T) {
	t.Parallel()
	g := newFairGate(1)
	a, b := &fakePeer{name: "a"}, &fakePeer{name: "b"}
	first, err := g.enter(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 8)
	queue := func(p Peer, name string) {
		g.mu.Lock()
		n := len(g.queues[p])
		g.mu.Unlock()
		go func() {
			leave, err := g.enter(context.Background(), p)
			if err != nil {
				t.Error(err)
				return
			}
			got <- name
			leave()
		}()
		for { // until it waits in the queue
			g.mu.Lock()
			queued := len(g.queues[p]) > n
			g.mu.Unlock()
			if queued {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	queue(a, "a2")
	queue(a, "a3")
	queue(a, "a4")
	queue(b, "b1")
	// One that gives up.
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() {
		_, err := g.enter(ctx, b)
		gaveUp <- err
	}()
	for {
		g.mu.Lock()
		n := len(g.queues[b])
		g.mu.Unlock()
		if n == 2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v", err)
	}
	first()
	var order []string
	for range 4 {
		order = append(order, <-got)
	}
	if want := []string{"a2", "b1", "a3", "a4"}; !equal(order, want) {
		t.Errorf("admitted %v, want %v", order, want)
	}
	// The last call's leave may still be on its way.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		g.mu.Lock()
		active, waiting := g.active, len(g.order)+len(g.queues)
		g.mu.Unlock()
		if active == 0 && waiting == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gate not empty afterwards: %d active, %d waiting", active, waiting)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFairGateBoundUnderChurn: with calls that give up while waiting (some
// after their turn came) among calls that wait, no call ever enters past
// the limit, each call that waits gets in once, and the gate ends empty:
// a turn channel put back for reuse carries no turn of its last call's.
func TestFairGateBoundUnderChurn(t *testing.T) {
	t.Parallel()
	const limit, peers, perPeer = 3, 8, 60
	g := newFairGate(limit)
	var mu sync.Mutex
	inside, most, entered := 0, 0, 0
	var wg sync.WaitGroup
	for p := range peers {
		peer := &fakePeer{name: strconv.Itoa(p)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perPeer {
				ctx, cancel := context.WithCancel(context.Background())
				if i%3 == 1 {
					// Gives up at once, or once its turn may have come.
					go func() { runtime.Gosched(); cancel() }()
				}
				leave, err := g.enter(ctx, peer)
				if err != nil {
					cancel()
					if !errors.Is(err, context.Canceled) {
						t.Errorf("enter: %v", err)
					}
					continue
				}
				mu.Lock()
				inside++
				entered++
				most = max(most, inside)
				mu.Unlock()
				runtime.Gosched()
				mu.Lock()
				inside--
				mu.Unlock()
				leave()
				cancel()
			}
		}()
	}
	wg.Wait()
	if most > limit {
		t.Errorf("%d calls inside at once, limit %d", most, limit)
	}
	if min := peers * perPeer * 2 / 3; entered < min {
		t.Errorf("%d calls entered, want at least the %d that never gave up", entered, min)
	}
	g.mu.Lock()
	active, waiting := g.active, len(g.order)+len(g.queues)
	g.mu.Unlock()
	if active != 0 || waiting != 0 {
		t.Errorf("gate not empty afterwards: %d active, %d waiting", active, waiting)
	}
}

// Entering a gate with room, and leaving it, allocates nothing: every
// call of an upstream does both. (Not parallel: AllocsPerRun.)
func TestFairGateEnterAllocatesNothing(t *testing.T) {
	g := newFairGate(4)
	p := &fakePeer{name: "a"}
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() {
		leave, err := g.enter(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		leave()
	}); n != 0 {
		t.Errorf("enter and leave: %v allocations, want 0", n)
	}
}
