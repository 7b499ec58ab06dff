package upstream

import (
	"context"
	"slices"
	"sync"
)

// DefaultMaxConcurrency is how many calls one upstream serves at once when
// its config sets no maxConcurrency: more wait, served fairly across
// sessions.
const DefaultMaxConcurrency = 16

// fairGate bounds the calls in flight on one upstream and, when they are
// at the bound, admits the waiting calls round-robin across sessions
// (peers): a session that queued a hundred calls does not starve one that
// queued one.
type fairGate struct {
	mu     sync.Mutex
	limit  int
	active int
	queues map[Peer][]chan struct{} // waiting calls by session (nil: no session)
	order  []Peer                   // sessions with waiting calls, next first
	exit   func()                   // leave, made once: a method value made per call is an allocation per call
}

func newFairGate(limit int) *fairGate {
	g := &fairGate{limit: limit, queues: map[Peer][]chan struct{}{}}
	g.exit = g.leave
	return g
}

func (g *fairGate) setLimit(limit int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.limit = limit
	for g.active < g.limit && g.handOff() {
		g.active++
	}
}

// enter waits for a slot for a call of peer; leave gives it back.
func (g *fairGate) enter(ctx context.Context, peer Peer) (leave func(), err error) {
	g.mu.Lock()
	if g.active < g.limit && len(g.order) == 0 {
		g.active++
		g.mu.Unlock()
		return g.exit, nil
	}
	ch := getTurn()
	if len(g.queues[peer]) == 0 {
		g.order = append(g.order, peer)
	}
	g.queues[peer] = append(g.queues[peer], ch)
	g.mu.Unlock()
	select {
	case <-ch:
		turns.Put(ch) // handOff took it out of the queue before it sent
		return g.exit, nil
	case <-ctx.Done():
		g.mu.Lock()
		q := g.queues[peer]
		i := slices.Index(q, ch)
		if i < 0 { // granted meanwhile: pass the slot on
			g.mu.Unlock()
			g.leave()
			return nil, ctx.Err()
		}
		q = slices.Delete(q, i, i+1)
		if len(q) == 0 {
			delete(g.queues, peer)
			g.order = slices.DeleteFunc(g.order, func(p Peer) bool { return p == peer })
		} else {
			g.queues[peer] = q
		}
		g.mu.Unlock()
		return nil, ctx.Err()
	}
}

// leave ends a call: its slot goes to the next session's oldest waiting
// call, if any.
func (g *fairGate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.active > g.limit || !g.handOff() {
		g.active--
	}
}

// handOff wakes the oldest waiting call of the next session in turn;
// false when none waits.
func (g *fairGate) handOff() bool {
	if len(g.order) == 0 {
		return false
	}
	peer := g.order[0]
	g.order = g.order[1:]
	q := g.queues[peer]
	q[0] <- struct{}{} // buffered, and sent once: never blocks
	if q = q[1:]; len(q) > 0 {
		g.queues[peer] = q
		g.order = append(g.order, peer) // its next call waits for its turn
	} else {
		delete(g.queues, peer)
	}
	return true
}

// turns are the channels waiting calls are woken on (buffered, one send
// each), reused: a call puts its channel back once it has received its
// turn, which handOff sends after taking the channel out of the queue. A
// call that gave up waiting leaves its channel to the collector.
var turns = sync.Pool{New: func() any { return make(chan struct{}, 1) }}

func getTurn() chan struct{} { return turns.Get().(chan struct{}) }
