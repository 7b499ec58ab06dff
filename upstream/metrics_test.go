package upstream

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metricValue returns the value of the series name{labels} in reg, and
// whether it exists.
func metricValue(t testing.TB, reg *prometheus.Registry, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			if len(got) != len(labels) {
				continue
			}
			for k, v := range labels {
				if got[k] != v {
					continue series
				}
			}
			switch {
			case m.Gauge != nil:
				return m.GetGauge().GetValue(), true
			case m.Counter != nil:
				return m.GetCounter().GetValue(), true
			}
		}
	}
	return 0, false
}

func wantMetric(t testing.TB, reg *prometheus.Registry, name string, labels map[string]string, want float64) {
	t.Helper()
	got, ok := metricValue(t, reg, name, labels)
	if !ok || got != want {
		t.Errorf("%s%v = %v (present %v), want %v", name, labels, got, ok, want)
	}
}

func TestMetricsStdio(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	p := New(&Options{Registerer: reg})
	srv, _ := testServer(t, "m", nil)
	u := p.Upstream(srv)
	call(t, u, "echo", map[string]any{"message": "x"})

	wantMetric(t, reg, "mcpgw_upstream_connects_total", map[string]string{"server": "m", "outcome": "success"}, 1)
	wantMetric(t, reg, "mcpgw_upstream_processes", nil, 1)
	for _, st := range states {
		want := 0.0
		if st == StateConnected {
			want = 1
		}
		wantMetric(t, reg, "mcpgw_upstream_state", map[string]string{"server": "m", "state": stateLabel(st)}, want)
	}

	// A crash, then a reconnect: one restart; still one process.
	if _, err := u.Call(context.Background(), "crash", nil, nil); err == nil {
		t.Fatal("crash: no error")
	}
	wantMetric(t, reg, "mcpgw_upstream_processes", nil, 0)
	wantMetric(t, reg, "mcpgw_upstream_state", map[string]string{"server": "m", "state": "failed"}, 1)
	call(t, u, "echo", map[string]any{"message": "x"})
	wantMetric(t, reg, "mcpgw_upstream_restarts_total", map[string]string{"server": "m"}, 1)
	wantMetric(t, reg, "mcpgw_upstream_connects_total", map[string]string{"server": "m", "outcome": "success"}, 2)
	wantMetric(t, reg, "mcpgw_upstream_processes", nil, 1)

	// Two pools may share a registry.
	p2 := New(&Options{Registerer: reg})
	p2.Close()

	p.Close()
	wantMetric(t, reg, "mcpgw_upstream_processes", nil, 0)
	if _, ok := metricValue(t, reg, "mcpgw_upstream_state", map[string]string{"server": "m", "state": "closed"}); ok {
		t.Error("a closed upstream's state series remain")
	}
}

func TestMetricsIdleAndFailures(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		p, d := memPool(&Options{Registerer: reg})
		defer p.Close()
		srv := memServer("lazy")
		srv.IdleTimeout = time.Minute
		u := p.Upstream(srv)
		call(t, u, "echo", map[string]any{"message": "x"})
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		wantMetric(t, reg, "mcpgw_upstream_idle_closes_total", map[string]string{"server": "lazy"}, 1)
		wantMetric(t, reg, "mcpgw_upstream_state", map[string]string{"server": "lazy", "state": "idle"}, 1)

		d.setFail(errors.New("refused"))
		u.Call(context.Background(), "echo", nil, nil)
		wantMetric(t, reg, "mcpgw_upstream_connects_total", map[string]string{"server": "lazy", "outcome": "failure"}, 1)
		wantMetric(t, reg, "mcpgw_upstream_state", map[string]string{"server": "lazy", "state": "failed"}, 1)
		wantMetric(t, reg, "mcpgw_upstream_restarts_total", map[string]string{"server": "lazy"}, 0)
	})
}
