package main

import (
	"log/slog"

	"github.com/mcpgw/mcpgw/gateway"
	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/gateway/teamstore"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/oauth"
)

// openTeamStore opens team.store, the store replicas share, when the
// config names one (nil otherwise: nothing of it is loaded). It is read
// at start: a reload that changes it takes effect at the next start.
func openTeamStore(cfg *registry.Config, stdio bool, log *slog.Logger) (*teamstore.Store, error) {
	if stdio || cfg.Team == nil || cfg.Team.Store == "" {
		return nil, nil
	}
	st, err := teamstore.Open(cfg.Team.Store, &teamstore.Options{Logger: log.With("component", "teamstore")})
	if err != nil {
		return nil, err
	}
	log.Info("team mode: approvals, sessions and users' own logins are shared through the team store", "store", st.Addr())
	return st, nil
}

// pending is the gateway's Options.Pending: the team store's, or nil.
func (w *wiring) pending() dispatch.Pending {
	if w.store == nil {
		return nil
	}
	return w.store.Pending()
}

// userLogins is the gateway's Options.UserLogins: each user's own logins,
// sealed in the team store under team.credentialKey as configured now;
// nil without a store (the gateway keeps them in memory).
func (w *wiring) userLogins() func(user string) oauth.Backend {
	if w.store == nil {
		return nil
	}
	logins := w.store.Logins(func() []byte { return w.gw.CredentialKey() })
	return func(user string) oauth.Backend { return logins.For(user) }
}

// sessions is the gateway's Options.Sessions: the team store's, or nil.
func (w *wiring) sessions() gateway.SessionStore {
	if w.store == nil {
		return nil
	}
	return w.store.Sessions()
}
