package gateway

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// callSeries gathers mcpgw_tool_calls_total from reg: each series' labels
// as name=value pairs, sorted, to its count.
func callSeries(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		if f.GetName() != "mcpgw_tool_calls_total" {
			continue
		}
		for _, m := range f.Metric {
			var labels []string
			for _, lp := range m.Label {
				labels = append(labels, lp.GetName()+"="+lp.GetValue())
			}
			slices.Sort(labels)
			out[fmt.Sprint(labels)] = m.GetCounter().GetValue()
		}
	}
	return out
}

// TestToolCallsByUser: in team mode, mcpgw_tool_calls_total has a user
// label, whose values are the first maxUserSeries users the daemon meets
// and "other" for every one after them (their later calls too); outside
// team mode it has none.
func TestToolCallsByUser(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := newMetrics(reg, true)
	for i := range maxUserSeries + 3 {
		m.call("db", fmt.Sprintf("u%02d", i), "ok", time.Millisecond)
	}
	m.call("db", "u00", "ok", time.Millisecond)    // a known user keeps their series
	m.call("db", "u51", "error", time.Millisecond) // a late user stays "other"
	m.call("docs", "u01", "ok", time.Millisecond)  // on another server too
	m.call("docs", "late", "ok", time.Millisecond) // as does a new one
	got := callSeries(t, reg)
	want := map[string]float64{}
	for i := range maxUserSeries {
		want[fmt.Sprintf("[outcome=ok server=db user=u%02d]", i)] = 1
	}
	want["[outcome=ok server=db user=u00]"] = 2
	want["[outcome=ok server=db user=other]"] = 3
	want["[outcome=error server=db user=other]"] = 1
	want["[outcome=ok server=docs user=u01]"] = 1
	want["[outcome=ok server=docs user=other]"] = 1
	if len(got) != len(want) {
		t.Errorf("%d series, want %d: %v", len(got), len(want), got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}

	reg = prometheus.NewRegistry()
	newMetrics(reg, false).call("db", "", "ok", time.Millisecond)
	if got := callSeries(t, reg); len(got) != 1 || got["[outcome=ok server=db]"] != 1 {
		t.Errorf("outside team mode: %v", got)
	}
}
