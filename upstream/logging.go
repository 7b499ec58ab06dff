//lint:file-ignore SA1019 MCP logging is deprecated as of protocol 2026-07-28 but still spoken by the clients and servers mcpgw sits between; a gateway forwards it.

package upstream

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// LogLevel is the level last given to SetLogLevel.
func (p *Pool) LogLevel() mcp.LoggingLevel {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logLevel
}

// SetLogLevel sets the level of the log messages upstreams send (those that
// declare logging): now for connected ones (it returns once they have
// answered, at most 5 s), at connect for the others. A connected upstream
// that did not take the level in time is asked again at the next
// SetLogLevel, even of the same level.
func (p *Pool) SetLogLevel(level mcp.LoggingLevel) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.logLevel = level
	sessions := make([]*session, 0, len(p.sessions))
	for s := range p.sessions {
		sessions = append(sessions, s)
	}
	p.mu.Unlock()
	// Wait, briefly, so that a client's next request after its setLevel
	// finds the upstreams at the new level.
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Add(1)
		if !p.goTracked(func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
			defer cancel()
			p.syncLogLevel(ctx, s, p.log)
		}) {
			wg.Done()
		}
	}
	wg.Wait()
}

// syncLogLevel brings the upstream of s to the pool's current level. The
// calls for one session are serialized and each sends the level current
// when it runs, so that SetLogLevels in a row, or one during a connect,
// leave the upstream at the last level set rather than at whichever
// request it happened to receive last.
func (p *Pool) syncLogLevel(ctx context.Context, s *session, log *slog.Logger) {
	s.levelMu.Lock()
	defer s.levelMu.Unlock()
	level := p.LogLevel()
	if level == "" || level == s.level {
		return
	}
	if setLogLevel(ctx, s.cs, level, log) {
		s.level = level
	}
}

// setLogLevel sends logging/setLevel to an upstream that declared logging;
// false if it did not answer (asking again may help), true if it took the
// level or refused it (asking again would not).
func setLogLevel(ctx context.Context, cs *mcp.ClientSession, level mcp.LoggingLevel, log *slog.Logger) bool {
	if init := cs.InitializeResult(); init == nil || init.Capabilities == nil || init.Capabilities.Logging == nil {
		return true // nothing to tell
	}
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level}); err != nil {
		log.Debug("setting the upstream's log level", "level", level, "err", err)
		var refused *jsonrpc.Error
		return errors.As(err, &refused)
	}
	return true
}
