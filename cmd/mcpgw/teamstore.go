package main

import (
	"log/slog"

	"github.com/mcpgw/mcpgw/gateway"
	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/gateway/teamstore"
	"github.com/mcpgw/mcpgw/registry"
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
	log.Info("team mode: approvals and sessions are shared through the team store", "store", st.Addr())
	return st, nil
}

// pending is the gateway's Options.Pending: the team store's, or nil.
func (w *wiring) pending() dispatch.Pending {
	if w.store == nil {
		return nil
	}
	return w.store.Pending()
}

// sessions is the gateway's Options.Sessions: the team store's, or nil.
func (w *wiring) sessions() gateway.SessionStore {
	if w.store == nil {
		return nil
	}
	return w.store.Sessions()
}
