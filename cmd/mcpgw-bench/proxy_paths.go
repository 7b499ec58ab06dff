//go:build linux

package main

// The measured paths: one way of making the same call, timed.

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchCall is the measured tool call; its result must be the echo.
type benchCall struct {
	tool string
	args any
	// timeout bounds the call; 0 is benchCallTimeout.
	timeout time.Duration
}

func (c benchCall) do(ctx context.Context, cs *mcp.ClientSession) error {
	timeout := c.timeout
	if timeout == 0 {
		timeout = benchCallTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
	if err != nil {
		return err
	}
	var text string
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	switch {
	case res.IsError:
		return fmt.Errorf("%s: error result %q", c.tool, text)
	case text != benchMessage:
		return fmt.Errorf("%s: got %q, want %q", c.tool, text, benchMessage)
	}
	return nil
}

// benchPath is one way of making the call, with its sessions (one per
// concurrent caller) and what it measured so far.
type benchPath struct {
	name     string
	call     benchCall
	sessions []*mcp.ClientSession
	procs    map[string]int // role → PID of the processes whose CPU counts
	metrics  string         // the daemon's /metrics URL, on daemon paths

	lat        []time.Duration // of successful calls
	calls      int             // successful
	errs       int
	firstErr   error
	elapsed    time.Duration
	ticks      map[string]int64
	rssPeakKB  int64 // the daemon's, sampled while running
	anonPeakKB int64 // its RssAnon, likewise
	allocs     float64
	gcs        float64
}

func newBenchPath(name string, call benchCall, sessions []*mcp.ClientSession, procs map[string]int) *benchPath {
	return &benchPath{name: name, call: call, sessions: sessions, procs: procs, ticks: map[string]int64{}}
}

// warmUp makes n calls on each session, not measured.
func (p *benchPath) warmUp(ctx context.Context, n int) {
	var wg sync.WaitGroup
	for _, cs := range p.sessions {
		wg.Go(func() {
			for range n {
				if err := p.call.do(ctx, cs); err != nil {
					p.record(nil, 0, 1, err) // a warm-up failure counts
					return
				}
			}
		})
	}
	wg.Wait()
}

var benchRecordMu sync.Mutex

func (p *benchPath) record(lat []time.Duration, calls, errs int, err error) {
	benchRecordMu.Lock()
	defer benchRecordMu.Unlock()
	p.lat = append(p.lat, lat...)
	p.calls += calls
	p.errs += errs
	if p.firstErr == nil && err != nil {
		p.firstErr = err
	}
}

// run calls on every session at once, each in a loop, for d; the CPU time
// of the path's processes is read before and after.
func (p *benchPath) run(ctx context.Context, d time.Duration) {
	allocs0, gcs0, _ := benchScrapeGC(ctx, p.metrics)
	before := p.cpu()
	stopSampling := func() {}
	if pid, ok := p.procs["daemon"]; ok {
		stopSampling = p.sampleRSS(pid)
	}
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for _, cs := range p.sessions {
		wg.Go(func() {
			lat := make([]time.Duration, 0, 1024)
			errs := 0
			var first error
			for ctx.Err() == nil && time.Now().Before(deadline) {
				t0 := time.Now()
				err := p.call.do(ctx, cs)
				if err != nil {
					errs++
					if first == nil {
						first = err
					}
					continue
				}
				lat = append(lat, time.Since(t0))
			}
			p.record(lat, len(lat), errs, first)
		})
	}
	wg.Wait()
	p.elapsed += time.Since(start)
	stopSampling()
	after := p.cpu()
	for role, t := range after {
		p.ticks[role] += t - before[role]
	}
	if allocs1, gcs1, err := benchScrapeGC(ctx, p.metrics); err == nil {
		p.allocs += allocs1 - allocs0
		p.gcs += gcs1 - gcs0
	}
}

// benchScrapeGC reads the bytes allocated and the GC cycles so far from a
// daemon's /metrics ("" reads nothing).
func benchScrapeGC(ctx context.Context, url string) (allocs, gcs float64, err error) {
	if url == "" {
		return 0, 0, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	found := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		switch name {
		case "go_memstats_alloc_bytes_total":
			allocs, err = strconv.ParseFloat(val, 64)
		case "go_gc_duration_seconds_count":
			gcs, err = strconv.ParseFloat(val, 64)
		default:
			continue
		}
		if err != nil {
			return 0, 0, fmt.Errorf("parsing %s from %s: %w", name, url, err)
		}
		found++
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("%s lacks go_memstats_alloc_bytes_total or go_gc_duration_seconds_count", url)
	}
	return allocs, gcs, nil
}

func (p *benchPath) cpu() map[string]int64 {
	out := make(map[string]int64, len(p.procs))
	for role, pid := range p.procs {
		if t, err := benchProcCPU(pid); err == nil {
			out[role] = t
		}
	}
	return out
}

// sampleRSS records the largest VmRSS of pid every 100ms until the
// returned function is called.
func (p *benchPath) sampleRSS(pid int) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if m, err := benchProcMemory(pid); err == nil {
				p.rssPeakKB = max(p.rssPeakKB, m.RSS)
				p.anonPeakKB = max(p.anonPeakKB, m.Anon)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

func (p *benchPath) figure() *benchFigure {
	f := &benchFigure{
		Path:     p.name,
		Sessions: len(p.sessions),
		Calls:    p.calls,
		Errors:   p.errs,
		Seconds:  p.elapsed.Seconds(),
		CPU:      map[string]float64{},
	}
	if p.elapsed > 0 {
		f.PerSecond = float64(p.calls) / p.elapsed.Seconds()
	}
	lat := slices.Clone(p.lat)
	slices.Sort(lat)
	f.P50 = benchQuantile(lat, 0.50)
	f.P99 = benchQuantile(lat, 0.99)
	if p.calls > 0 {
		for role, t := range p.ticks {
			f.CPU[role] = float64(t) * (1e6 / benchClockTicks) / float64(p.calls)
		}
		f.AllocKB = p.allocs / 1024 / float64(p.calls)
		f.GCs = p.gcs * 1000 / float64(p.calls)
	}
	return f
}

// benchQuantile is the nearest-rank q-quantile of sorted, in µs.
func benchQuantile(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	i = min(max(i, 0), len(sorted)-1)
	return float64(sorted[i]) / float64(time.Microsecond)
}

// benchRotate returns paths starting at the r-th, so that no path is
// always measured first in a round.
func benchRotate(paths []*benchPath, r int) []*benchPath {
	k := r % len(paths)
	return slices.Concat(paths[k:], paths[:k])
}
