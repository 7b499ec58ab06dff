package gateway

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpgw/mcpgw/registry"
)

// Servers can be disabled (and enabled again) for the daemon's lifetime,
// from the status page, without touching the config file: the catalogue
// holds the loaded configuration with those servers turned off, and a
// reload keeps them off.

// SetEnabled enables or disables the server name until the daemon stops.
// Disabling closes its upstream (unless another enabled name shares it)
// and takes its tools from every session; enabling restores what the
// config says.
func (s *Hub) SetEnabled(name string, on bool) error {
	if base := s.base.Load(); base.Servers[name] == nil || base.Settings.Hidden(base.Servers[name]) {
		return fmt.Errorf("no server %q", name)
	}
	s.overrideMu.Lock()
	if on {
		delete(s.disabled, name)
	} else {
		if s.disabled == nil {
			s.disabled = map[string]bool{}
		}
		s.disabled[name] = true
	}
	s.overrideMu.Unlock()
	state := "enabled"
	if !on {
		state = "disabled"
	}
	s.log.Info("server "+state+" from the status page, until the daemon stops", "server", name)
	s.Reload(s.base.Load()) // the same configuration, with the override
	return nil
}

// disabledHere reports whether name was disabled with SetEnabled.
func (s *Hub) disabledHere(name string) bool {
	s.overrideMu.Lock()
	defer s.overrideMu.Unlock()
	return s.disabled[name]
}

// withOverrides returns cfg with the servers disabled by SetEnabled turned
// off (cfg itself when there are none). The copy's hash says which, so
// that views of it are not confused with views of cfg.
func (s *Hub) withOverrides(cfg *registry.Config) *registry.Config {
	s.overrideMu.Lock()
	defer s.overrideMu.Unlock()
	if cfg == nil || len(s.disabled) == 0 {
		return cfg
	}
	cp := *cfg
	cp.Servers = maps.Clone(cfg.Servers)
	names := slices.Sorted(maps.Keys(s.disabled))
	for _, name := range names {
		if srv, ok := cp.Servers[name]; ok && srv.Enabled {
			off := *srv
			off.Enabled = false
			cp.Servers[name] = &off
		}
	}
	cp.Hash = cfg.Hash + "-disabled:" + strings.Join(names, ",")
	return &cp
}
