package registry

import (
	"testing"
)

// FuzzParse feeds the config parser (JSONC, every field, imports named in
// the file but not read) arbitrary bytes: it never panics, and a config it
// accepts names and hashes every server.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`{"mcpServers": {"a": {"command": "x", "args": ["-y"], "env": {"K": "${V}"}}}}`,
		`{"mcpServers": {"r": {"url": "https://h/mcp?api_key=1", "headers": {"A": "!!b"}, "auth": "oauth", "oauth": {"clientId": "c", "scope": "s t"}}}, "settings": {"mode": "direct"}}`,
		`// comment
		{"mcp-servers": {"a": {"command": "x", "lifecycle": "keep-alive", "idleTimeout": 0.5,}}, "imports": ["cursor"]}`,
		`{"mcpServers": {"a": {"command": "x", "includeTools": ["*"], "directTools": true, "isolation": "session"}}}`,
		`[[[[[[[[[[`, `{"mcpServers": null}`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "fuzz.json", &LoadOptions{Home: "/nonexistent-home", Getenv: func(string) string { return "" }})
		if err != nil {
			return
		}
		for name, srv := range cfg.Servers {
			if srv == nil || srv.Name != name || srv.Hash == "" {
				t.Fatalf("server %q accepted as %+v", name, srv)
			}
		}
	})
}
