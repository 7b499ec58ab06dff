package upstream

import (
	"errors"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of mcpgw_upstream_connects_total.
const (
	outcomeSuccess   = "success"
	outcomeFailure   = "failure"
	outcomeTimeout   = "timeout"
	outcomeNeedsAuth = "needs_auth"
)

// metrics are the pool's Prometheus metrics. A nil *metrics records nothing.
type metrics struct {
	state      *prometheus.GaugeVec
	connects   *prometheus.CounterVec
	restarts   *prometheus.CounterVec
	idleCloses *prometheus.CounterVec
	processes  prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	if reg == nil {
		return nil
	}
	m := &metrics{
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mcpgw_upstream_state",
			Help: "1 for the current state of each upstream, 0 for the others (idle, connecting, connected, failed, needs_auth, closed).",
		}, []string{"server", "state"}),
		connects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgw_upstream_connects_total",
			Help: "Connects to upstreams, by outcome (success, failure, timeout, needs_auth).",
		}, []string{"server", "outcome"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgw_upstream_restarts_total",
			Help: "Successful reconnects after an upstream connection was lost (crash, kill, health check).",
		}, []string{"server"}),
		idleCloses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgw_upstream_idle_closes_total",
			Help: "Upstream connections closed after their idle timeout.",
		}, []string{"server"}),
		processes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcpgw_upstream_processes",
			Help: "Running upstream child processes (stdio servers).",
		}),
	}
	m.state = register(reg, m.state)
	m.connects = register(reg, m.connects)
	m.restarts = register(reg, m.restarts)
	m.idleCloses = register(reg, m.idleCloses)
	m.processes = register(reg, m.processes)
	return m
}

// register registers c, or returns the equal collector already registered
// (two pools on one registry share their metrics).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err) // a conflicting metric of the same name: a programming error
	}
	return c
}

// add creates server's series at zero, so rates start from the first scrape.
func (m *metrics) add(server string, st State) {
	if m == nil {
		return
	}
	m.setState(server, st)
	for _, o := range []string{outcomeSuccess, outcomeFailure, outcomeTimeout, outcomeNeedsAuth} {
		m.connects.WithLabelValues(server, o)
	}
	m.restarts.WithLabelValues(server)
	m.idleCloses.WithLabelValues(server)
}

func (m *metrics) setState(server string, st State) {
	if m == nil {
		return
	}
	for _, s := range states {
		v := 0.0
		if s == st {
			v = 1
		}
		m.state.WithLabelValues(server, stateLabel(s)).Set(v)
	}
}

// stateLabel is a State as mcpgw_upstream_state's label value: spelt as
// every other label value is, with underscores (needs_auth, as the
// connect outcome), where status and the page write needs-auth.
func stateLabel(s State) string { return strings.ReplaceAll(string(s), "-", "_") }

func (m *metrics) connect(server, outcome string) {
	if m != nil {
		m.connects.WithLabelValues(server, outcome).Inc()
	}
}

func (m *metrics) restart(server string) {
	if m != nil {
		m.restarts.WithLabelValues(server).Inc()
	}
}

func (m *metrics) idleClose(server string) {
	if m != nil {
		m.idleCloses.WithLabelValues(server).Inc()
	}
}

func (m *metrics) processStarted() {
	if m != nil {
		m.processes.Inc()
	}
}

func (m *metrics) processExited() {
	if m != nil {
		m.processes.Dec()
	}
}

// forget drops every series of server (renamed or removed).
func (m *metrics) forget(server string) {
	if m == nil {
		return
	}
	l := prometheus.Labels{"server": server}
	m.state.DeletePartialMatch(l)
	m.connects.DeletePartialMatch(l)
	m.restarts.DeletePartialMatch(l)
	m.idleCloses.DeletePartialMatch(l)
}
