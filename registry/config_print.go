package registry

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteServers prints a table of the servers: name, state, transport,
// command or URL (secrets masked; header, env names only) and source.
func (cfg *Config) WriteServers(w io.Writer) {
	if len(cfg.Servers) == 0 {
		fmt.Fprintln(w, "no servers")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tTRANSPORT\tCOMMAND OR URL\tSOURCE")
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		s := cfg.Servers[name]
		state := "enabled"
		switch {
		case s.Untrusted:
			state = "untrusted"
		case !s.Enabled:
			state = "disabled"
		}
		transport, target := "stdio", s.MaskedCommand()
		if s.IsRemote() {
			transport, target = "http", MaskURL(s.URL)
			if len(s.Headers) > 0 {
				target += " [headers: " + strings.Join(slices.Sorted(maps.Keys(s.Headers)), ", ") + "]"
			}
			if s.BearerToken != "" || s.BearerTokenEnv != "" {
				target += " [bearer token]"
			}
		} else if len(s.Env) > 0 {
			target += " [env: " + strings.Join(slices.Sorted(maps.Keys(s.Env)), ", ") + "]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, state, transport, target, s.Source)
	}
	tw.Flush()
}

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

// WriteSources prints the config file's path (saying when it does not
// exist) and the files it imports.
func (cfg *Config) WriteSources(w io.Writer) {
	fmt.Fprintf(w, "config: %s", cfg.Path)
	if cfg.Missing {
		fmt.Fprint(w, " (does not exist)")
	}
	fmt.Fprintln(w)
	if len(cfg.Imports) > 0 {
		fmt.Fprintf(w, "imports: %s\n", strings.Join(cfg.Imports, ", "))
	}
}
