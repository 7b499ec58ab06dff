package gateway

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the gateway's own series. Label values are bounded: server
// names and fixed outcome words, never tool arguments.
type metrics struct {
	calls       *prometheus.CounterVec
	callSeconds *prometheus.HistogramVec
	sessions    prometheus.Gauge
	cacheWrites *prometheus.CounterVec
	reloads     *prometheus.CounterVec
	reloadOK    prometheus.Gauge
	reloadTime  prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgw_tool_calls_total",
			Help: "Tool calls forwarded to upstreams, by server and outcome (ok, tool_error, error, timeout, canceled).",
		}, []string{"server", "outcome"}),
		callSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcpgw_tool_call_duration_seconds",
			Help:    "Latency of tool calls forwarded to upstreams, including a lazy connect.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"server"}),
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcpgw_sessions",
			Help: "Downstream MCP sessions currently open.",
		}),
		cacheWrites: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgw_cache_writes_total",
			Help: "Writes of the metadata cache file, by outcome.",
		}, []string{"outcome"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgw_config_reloads_total",
			Help: "Configuration reload attempts, by outcome.",
		}, []string{"outcome"}),
		reloadOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcpgw_config_last_reload_successful",
			Help: "Whether the last configuration reload attempt succeeded (1) or kept the previous config (0).",
		}),
		reloadTime: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcpgw_config_last_reload_success_timestamp_seconds",
			Help: "Time of the last successful configuration load.",
		}),
	}
	m.reloadOK.Set(1)
	m.reloadTime.SetToCurrentTime()
	if reg != nil {
		reg.MustRegister(m.calls, m.callSeconds, m.sessions, m.cacheWrites, m.reloads, m.reloadOK, m.reloadTime)
	}
	return m
}

func (m *metrics) call(server, outcome string, d time.Duration) {
	m.calls.WithLabelValues(server, outcome).Inc()
	m.callSeconds.WithLabelValues(server).Observe(d.Seconds())
}

func (m *metrics) cacheWrite(err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.cacheWrites.WithLabelValues(outcome).Inc()
}

func (m *metrics) reload(err error) {
	if err != nil {
		m.reloads.WithLabelValues("error").Inc()
		m.reloadOK.Set(0)
		return
	}
	m.reloads.WithLabelValues("ok").Inc()
	m.reloadOK.Set(1)
	m.reloadTime.SetToCurrentTime()
}
