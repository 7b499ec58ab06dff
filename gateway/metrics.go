package gateway

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/registry"
)

// metrics are the gateway's own series. Label values are bounded: server
// names and fixed outcome words, never tool arguments.
type metrics struct {
	calls       *prometheus.CounterVec
	callSeconds *prometheus.HistogramVec
	sessions    prometheus.Gauge
	reloads     *prometheus.CounterVec
	reloadOK    prometheus.Gauge
	reloadTime  prometheus.Gauge
	discWait    *prometheus.HistogramVec
	relist      prometheus.Histogram
	clientReqs  *prometheus.CounterVec
	dropped     prometheus.Counter
	approvals   *prometheus.CounterVec
	scripts     *prometheus.CounterVec
	scriptTime  prometheus.Histogram

	approvalMu     sync.Mutex
	approvalSeries map[string]bool // servers whose approvals series exist

	// users are the values of mcpgw_tool_calls_total's user label, in
	// team mode; nil outside it, where the series have no such label.
	users *userLabels

	// callSeries are the series each call of a server with an outcome
	// counts in (callKey to *serverCalls): a Vec's WithLabelValues
	// hashes every label byte and takes a lock, on every call. Call
	// series are never deleted, so what is kept stays theirs.
	callSeries sync.Map
}

type callKey struct{ server, outcome string }

// serverCalls are the series of one server's calls with one outcome.
type serverCalls struct {
	calls   prometheus.Counter // nil in team mode, where the user labels it too
	seconds prometheus.Observer
}

// newMetrics makes the gateway's series; team (the config's team block,
// as the daemon starts) gives mcpgw_tool_calls_total its user label. A
// Vec's labels are fixed when it is made, so a team block added or
// removed at a reload changes them at the next start, as team.store does.
func newMetrics(reg prometheus.Registerer, team bool) *metrics {
	callLabels, callHelp := []string{"server", "outcome"}, ""
	var users *userLabels
	if team {
		callLabels, users = append(callLabels, "user"), &userLabels{seen: map[string]bool{}}
		callHelp = fmt.Sprintf(", and in team mode by user (the first %d users the daemon meets; later ones count as %q)", maxUserSeries, otherUsers)
	}
	m := &metrics{
		users: users,
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgw_tool_calls_total",
			Help: "Tool calls forwarded to upstreams, by server and outcome (ok, tool_error, error, timeout, canceled)" + callHelp + ".",
		}, callLabels),
		callSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcpgw_tool_call_duration_seconds",
			Help:    "Latency of tool calls forwarded to upstreams, including a lazy connect.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"server"}),
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcpgw_sessions",
			Help: "Downstream MCP sessions currently open.",
		}),
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
		discWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcpgw_discovery_wait_seconds",
			Help:    "Time answers about tools waited for servers being discovered, by outcome (complete, timeout).",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2, 4, 8, 16, 32},
		}, []string{"outcome"}),
		relist: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "mcpgw_toolsearch_hold_seconds",
			Help:    "Time ToolSearch answers waited for the client to re-read its tool list after activating tools.",
			Buckets: []float64{.01, .05, .1, .2, .3, .4, .5, .75, 1, 1.5, 2},
		}),
		clientReqs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgw_client_requests_total",
			Help: "Requests of upstreams forwarded to the session whose call caused them, by kind (sampling, elicitation).",
		}, []string{"kind"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcpgw_session_messages_dropped_total",
			Help: "Messages for a session (upstream log messages, resource updates) dropped because its client was not taking them.",
		}),
		approvals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgw_approvals_total",
			Help: "Decisions on tool calls that needed the user's approval, by server and decision (allowed, allowed_tool, allowed_server, denied, timeout).",
		}, []string{"server", "decision"}),
		scripts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgw_scripts_total",
			Help: "Code-mode scripts run, by outcome (ok, exception, syntax, timeout, memory, canceled, stalled, engine; refused: past settings.scriptsPerSession or scriptsPerDaemon). Their tool calls count in mcpgw_tool_calls_total.",
		}, []string{"outcome"}),
		scriptTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "mcpgw_script_duration_seconds",
			Help:    "Wall time of code-mode scripts, their tool calls included.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}),
	}
	m.reloadOK.Set(1)
	m.reloadTime.SetToCurrentTime()
	// Every label set known in advance exists from the start, at zero, so
	// that a scrape before the first event shows the series (and a rate
	// over it starts from 0, not from its first increase).
	for _, o := range []string{"complete", "timeout"} {
		m.discWait.WithLabelValues(o)
	}
	for _, k := range []string{"sampling", "elicitation"} {
		m.clientReqs.WithLabelValues(k)
	}
	if reg != nil {
		reg.MustRegister(m.calls, m.callSeconds, m.sessions, m.reloads, m.reloadOK, m.reloadTime, m.discWait, m.relist, m.clientReqs, m.dropped, m.approvals, m.scripts, m.scriptTime)
	}
	return m
}

func (m *metrics) clientRequest(kind string) { m.clientReqs.WithLabelValues(kind).Inc() }

// approvalServers makes the approval series of every enabled server whose
// calls may need approval (approveTools set for it or for all) exist at
// zero, and drops those of servers that no longer can. The caller
// serialises calls (New, then the daemon's one reload goroutine).
func (m *metrics) approvalServers(cfg *registry.Config) {
	m.approvalMu.Lock()
	defer m.approvalMu.Unlock()
	want := map[string]bool{}
	for name, srv := range cfg.Servers {
		if srv.Enabled && (srv.ApproveTools.Set || cfg.Settings.ApproveTools.Set) {
			want[name] = true
			for _, d := range dispatch.ApprovalWords {
				m.approvals.WithLabelValues(name, d)
			}
		}
	}
	for name := range m.approvalSeries {
		if !want[name] {
			m.approvals.DeletePartialMatch(prometheus.Labels{"server": name})
		}
	}
	m.approvalSeries = want
}

func (m *metrics) approval(server, decision string) {
	m.approvals.WithLabelValues(server, decision).Inc()
}

// call counts a call of user ("" outside team mode) to server.
func (m *metrics) call(server, user, outcome string, d time.Duration) {
	k := callKey{server, outcome}
	sc, ok := m.callSeries.Load(k)
	if !ok {
		c := &serverCalls{seconds: m.callSeconds.WithLabelValues(server)}
		if m.users == nil {
			c.calls = m.calls.WithLabelValues(server, outcome)
		}
		sc, _ = m.callSeries.LoadOrStore(k, c)
	}
	c := sc.(*serverCalls)
	if m.users != nil {
		m.calls.WithLabelValues(server, outcome, m.users.label(user)).Inc()
	} else {
		c.calls.Inc()
	}
	c.seconds.Observe(d.Seconds())
}

// Team mode's user label is bounded: a team of any size, or a caller
// minting users (every token of the issuer names one), adds at most
// maxUserSeries values, each times the servers and outcomes it called.
// Only calls carry it; their latency histogram (sixteen buckets a series)
// and the approvals do not (the audit log has every call and decision by
// user).
const (
	maxUserSeries = 50
	otherUsers    = "other" // the user label of the users past maxUserSeries
)

// userLabels gives each user met the user label of their calls: their own
// name for the first maxUserSeries users of the daemon's life, in the
// order their first call ended, otherUsers for the rest. mu is a leaf.
type userLabels struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (u *userLabels) label(user string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.seen[user] {
		if len(u.seen) >= maxUserSeries {
			return otherUsers
		}
		u.seen[user] = true
	}
	return user
}

func (m *metrics) discoveryWait(d time.Duration, complete bool) {
	outcome := "complete"
	if !complete {
		outcome = "timeout"
	}
	m.discWait.WithLabelValues(outcome).Observe(d.Seconds())
}

func (m *metrics) relistHold(d time.Duration) { m.relist.Observe(d.Seconds()) }

// registerCatalog exports the catalogue's size and the cache file's
// counters, read at scrape time.
func registerCatalog(reg prometheus.Registerer, s *Hub) {
	if reg == nil {
		return
	}
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "mcpgw_tools",
		Help: "Tools in the catalogue (live or cached), over all enabled servers, the mcp tool's resource readers (SERVER_read_NAME) included.",
	}, func() float64 { return float64(len(s.catalog.View().Tools)) }))
	if s.opts.Cache != nil {
		reg.MustRegister(cacheCollector{s.opts.Cache})
	}
}

var (
	cacheReadsDesc  = prometheus.NewDesc("mcpgw_cache_reads_total", "Reads and lookups of the metadata cache file.", nil, nil)
	cacheHitsDesc   = prometheus.NewDesc("mcpgw_cache_hits_total", "Cache lookups that found a valid entry.", nil, nil)
	cacheMissesDesc = prometheus.NewDesc("mcpgw_cache_misses_total", "Cache lookups that found no valid entry (absent, stale, other config, corrupt file).", nil, nil)
	cacheWritesDesc = prometheus.NewDesc("mcpgw_cache_writes_total", "Writes of the metadata cache file, by outcome.", []string{"outcome"}, nil)
	cacheCorruptDes = prometheus.NewDesc("mcpgw_cache_corrupt_total", "Times the cache file was found corrupt, truncated or of another version.", nil, nil)
)

type cacheCollector struct{ f registry.Cache }

func (c cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cacheReadsDesc, cacheHitsDesc, cacheMissesDesc, cacheWritesDesc, cacheCorruptDes} {
		ch <- d
	}
}

func (c cacheCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.f.Stats()
	ch <- prometheus.MustNewConstMetric(cacheReadsDesc, prometheus.CounterValue, float64(st.Reads))
	ch <- prometheus.MustNewConstMetric(cacheHitsDesc, prometheus.CounterValue, float64(st.Hits))
	ch <- prometheus.MustNewConstMetric(cacheMissesDesc, prometheus.CounterValue, float64(st.Misses))
	ch <- prometheus.MustNewConstMetric(cacheWritesDesc, prometheus.CounterValue, float64(st.Writes), "ok")
	ch <- prometheus.MustNewConstMetric(cacheWritesDesc, prometheus.CounterValue, float64(st.WriteErrors), "error")
	ch <- prometheus.MustNewConstMetric(cacheCorruptDes, prometheus.CounterValue, float64(st.Corrupt))
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
	// Every label set known in advance exists from the start, at zero, so
	// that a scrape before the first event shows the series (and a rate
	// over it starts from 0, not from its first increase).
	for _, o := range []string{"complete", "timeout"} {
		m.discWait.WithLabelValues(o)
	}
	for _, k := range []string{"sampling", "elicitation"} {
		m.clientReqs.WithLabelValues(k)
	}
}
