package upstream

import (
	"context"
	"errors"
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
