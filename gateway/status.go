package gateway

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
)

// RecordReload notes the outcome of a reload attempt for status, metrics
// and mcp({}).
func (s *Hub) RecordReload(err error) { s.recordReload(err, false) }

// RecordNoConfig notes a load that failed while no configuration has
// loaded since the daemon started: it serves no servers, and there is no
// last good configuration to speak of.
func (s *Hub) RecordNoConfig(err error) { s.recordReload(err, true) }

func (s *Hub) recordReload(err error, none bool) {
	info := &api.ReloadInfo{At: time.Now(), OK: err == nil, NoConfig: err != nil && none}
	if err != nil {
		info.Error = err.Error()
	}
	s.mu.Lock()
	s.lastReload = info
	s.mu.Unlock()
	s.metrics.reload(err)
}

// httpListener is the HTTP listener's address, or why there is none.
type httpListener struct{ addr, err string }

// SetHTTP says what the daemon's HTTP listener serves (addr), or why the
// address it was asked to serve (listen) is not served (err), for the
// status report: the CLI, which reaches the daemon through its socket
// too, tells the user why the page is not there.
func (s *Hub) SetHTTP(addr, listen string, err error) {
	l := httpListener{addr: addr}
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		l.err = listen + " is taken by another program"
	case err != nil:
		l.err = fmt.Sprintf("%s: %v", listen, err)
	}
	s.mu.Lock()
	s.http = l
	s.mu.Unlock()
}

func (s *Hub) httpListener() httpListener {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.http
}

func (s *Hub) reloadInfo() *api.ReloadInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastReload
}
