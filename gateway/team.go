package gateway

import (
	"context"

	"github.com/mcpgw/mcpgw/gateway/identity"
)

// Team mode (the config's team block, DESIGN decision 16): who is calling
// is checked where requests enter (gateway/transport, with
// gateway/identity), and the user travels from the request into the
// session it opens (SessionOptions.User). What follows keeps one user's
// things from another: sessions (transport.sessionOwner), pending
// approvals and scripts on the page and in the status report, and a
// 2026-07-28 conversation, which is each user's own.

// teamAuthority says who is calling under the team block in force: it
// reads the configuration as loaded for every request, so that a reload
// that changes the block takes effect for the next one.
func (s *Hub) teamAuthority() *identity.Authority {
	return identity.NewAuthority(func() *identity.Config {
		cfg := s.base.Load()
		if cfg == nil || cfg.Team == nil {
			return nil
		}
		t := cfg.Team
		return &identity.Config{Issuer: t.Issuer, Audience: t.Audience, UserClaim: t.UserClaim, GroupsClaim: t.GroupsClaim}
	}, &identity.Options{Logger: s.log.With("component", "identity")})
}

// User implements dispatch.Caller and transport.Session: who opened the
// session, in team mode.
func (ss *session) User() string { return identity.NameOf(ss.opts.User) }

// userOf is the user a request's context carries; "" outside team mode.
func userOf(ctx context.Context) string { return identity.NameOf(identity.FromContext(ctx)) }
