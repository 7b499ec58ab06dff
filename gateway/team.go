package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpgw/mcpgw/gateway/identity"
	"github.com/mcpgw/mcpgw/registry"
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

// errNoUser: a server reached with each user's own credentials
// (tokenExchange, or their own login) was asked for without a user, which
// only team mode's requests carry.
var errNoUser = errors.New("its upstream is reached with each user's own credentials (tokenExchange, or their own login), and no user is calling")

// exchangeToken implements upstream.Options.Exchange: the token of the
// user whose upstream key is (userUpstreamKey) for srv, got by token
// exchange of that user's bearer token (the one verified last that
// expires last, identity.Authority.Subject). Another user's token is
// never at hand here: the key names whose upstream asks, and the
// exchanger keeps tokens by user.
func (s *Hub) exchangeToken(ctx context.Context, srv *registry.Server, key string) (string, error) {
	user, ok := strings.CutPrefix(key, userUpstreamKey(""))
	if !ok || user == "" {
		return "", errNoUser
	}
	subject, ok := s.team.Subject(user)
	if !ok {
		return "", fmt.Errorf("%s has no unexpired token to exchange; their next request brings one", user)
	}
	return s.exchanger.Token(ctx, user, subject, exchangeOf(srv.TokenExchange))
}

// exchangeOf is what a tokenExchange block asks the issuer for.
func exchangeOf(x *registry.TokenExchange) identity.Exchange {
	return identity.Exchange{
		TokenEndpoint: x.TokenEndpoint, ClientID: x.ClientID, ClientSecret: x.ClientSecret,
		Audience: x.Audience, Resource: x.Resource, Scope: x.Scope,
		SubjectTokenType: identity.TokenTypePrefix + x.SubjectTokenType,
	}
}

// User implements dispatch.Caller and transport.Session: who opened the
// session, in team mode.
func (ss *session) User() string { return identity.NameOf(ss.opts.User) }

// userOf is the user a request's context carries; "" outside team mode.
func userOf(ctx context.Context) string { return identity.NameOf(identity.FromContext(ctx)) }
