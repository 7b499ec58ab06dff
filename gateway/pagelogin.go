package gateway

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// A login from the status page: the user clicks Log in, the daemon starts
// the authorization code flow (as `mcpgw login` does, with its one-shot
// loopback callback) and sends the browser that clicked to the
// authorization page. The daemon never opens a browser by itself; this is
// the user's click. When the authorization server redirects back, the
// tokens are stored and the server reconnected.

// pageLogin is one login in progress.
type pageLogin struct {
	url  chan string // the authorization URL, once known
	done chan struct{}
	err  error // set before done closes
}

// errClosing answers what asks for work of a daemon that is stopping.
var errClosing = errors.New("mcpgw is stopping")

// track counts background work in wg, under mu, unless Close has begun
// (then it reports false and nothing is counted): no Add races Close's
// Wait.
func (s *Hub) track() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	return true
}

// loginTimeout bounds a page login.
const loginTimeout = 5 * time.Minute

// startLogin returns the login of srv in progress, starting one if none is.
func (s *Hub) startLogin(srv *registry.Server) *pageLogin {
	s.loginMu.Lock()
	defer s.loginMu.Unlock()
	if l := s.logins[srv.Name]; l != nil {
		return l
	}
	l := &pageLogin{url: make(chan string, 1), done: make(chan struct{})}
	if !s.track() {
		l.err = errClosing
		close(l.done)
		return l
	}
	if s.logins == nil {
		s.logins = map[string]*pageLogin{}
	}
	s.logins[srv.Name] = l
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(s.ctx, loginTimeout)
		defer cancel()
		browser := func(ctx context.Context, authURL string, redirect <-chan *url.URL) (*url.URL, error) {
			l.url <- authURL
			select {
			case u := <-redirect:
				return u, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		l.err = upstream.LogIn(ctx, srv, s.opts.OAuthStore, browser)
		if l.err == nil {
			s.log.Info("logged in from the status page", "server", srv.Name)
			if _, err := s.pool.Upstream(srv).Reconnect(ctx); err != nil {
				s.log.Warn("reconnecting after the login", "server", srv.Name, "err", err)
			}
		} else {
			s.log.Warn("login from the status page failed", "server", srv.Name, "err", l.err)
		}
		s.loginMu.Lock()
		delete(s.logins, srv.Name)
		s.loginMu.Unlock()
		close(l.done)
	}()
	return l
}
