package registry

import "fmt"

// LoadOAuthServer loads the config at path (the default one for "") and
// returns its server name, which must be a remote server using OAuth, and
// the config's settings.
func LoadOAuthServer(path, name string) (*Server, Settings, error) {
	srv, cfg, err := loadOAuthServer(path, name)
	if err != nil {
		return nil, Settings{}, err
	}
	return srv, cfg.Settings, nil
}

func loadOAuthServer(path, name string) (*Server, *Config, error) {
	cfg, err := Load(path, &LoadOptions{})
	if err != nil {
		return nil, nil, err
	}
	srv, ok := cfg.Servers[name]
	switch {
	case !ok:
		return nil, nil, fmt.Errorf("no server %q in %s", name, cfg.Path)
	case srv.URL == "":
		return nil, nil, fmt.Errorf("%s is a stdio server: only remote servers log in", name)
	case srv.Auth != AuthOAuth:
		return nil, nil, fmt.Errorf(`%s does not use OAuth: add "auth": "oauth" to its entry in %s`, name, cfg.Path)
	}
	return srv, cfg, nil
}

// Enabled counts the enabled servers.
func (cfg *Config) Enabled() int {
	n := 0
	for _, s := range cfg.Servers {
		if s.Enabled {
			n++
		}
	}
	return n
}
