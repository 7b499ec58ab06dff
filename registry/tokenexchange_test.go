package registry

import (
	"reflect"
	"strings"
	"testing"
)

func TestTokenExchangeBlock(t *testing.T) {
	const team = `"team": {"issuer": "https://id.example.com", "audience": "mcpgw"}, `
	env := map[string]string{"EXCHANGE_SECRET": "hunter2"}
	for _, tc := range []struct {
		name   string
		team   string // the team block, or ""
		server string // the server's members
		want   *TokenExchange
		err    string // the error (want nil), else the one warning
	}{
		{"minimal", team, `"url": "https://t.example.com/mcp", "tokenExchange": {"audience": "tickets", "clientId": "mcpgw"}`,
			&TokenExchange{Audience: "tickets", ClientID: "mcpgw", SubjectTokenType: "access_token"}, ""},
		{"every field", team, `"url": "https://t.example.com/mcp", "tokenExchange": {"audience": "tickets", "resource": "https://t.example.com/",
			"scope": "read write", "clientId": "mcpgw", "clientSecret": "${EXCHANGE_SECRET}", "subjectTokenType": "id_token",
			"tokenEndpoint": "https://id.example.com/token"}`,
			&TokenExchange{Audience: "tickets", Resource: "https://t.example.com/", Scope: "read write", ClientID: "mcpgw",
				ClientSecret: "hunter2", SubjectTokenType: "id_token", TokenEndpoint: "https://id.example.com/token"}, ""},
		{"explicit user isolation", team, `"url": "https://t.example.com/mcp", "isolation": "user", "tokenExchange": {"resource": "r", "clientId": "c"}`,
			&TokenExchange{Resource: "r", ClientID: "c", SubjectTokenType: "access_token"}, ""},
		{"outside team mode", "", `"url": "https://t.example.com/mcp", "tokenExchange": {"audience": "tickets", "clientId": "mcpgw"}`, nil,
			`mcpServers.t.tokenExchange: needs team mode (a team block): it exchanges the calling user's bearer token, and outside team mode no request carries one`},
		{"no audience", team, `"url": "https://t.example.com/mcp", "tokenExchange": {"clientId": "mcpgw"}`, nil,
			`mcpServers.t.tokenExchange: needs an audience or a resource: what the exchanged token is for`},
		{"no client", team, `"url": "https://t.example.com/mcp", "tokenExchange": {"audience": "a"}`, nil,
			`mcpServers.t.tokenExchange: needs a clientId: mcpgw's own client at the issuer, which the exchange authenticates`},
		{"shared", team, `"url": "https://t.example.com/mcp", "isolation": "shared", "tokenExchange": {"audience": "a", "clientId": "c"}`, nil,
			`mcpServers.t.tokenExchange: runs the server once per user; isolation must be "user" or unset, not "shared"`},
		{"with oauth", team, `"url": "https://t.example.com/mcp", "auth": "oauth", "tokenExchange": {"audience": "a", "clientId": "c"}`, nil,
			`mcpServers.t.tokenExchange: cannot be combined with an OAuth login (auth "oauth" or an oauth block): both would set the Authorization header`},
		{"with bearer", team, `"url": "https://t.example.com/mcp", "bearerToken": "x", "tokenExchange": {"audience": "a", "clientId": "c"}`, nil,
			`mcpServers.t.tokenExchange: cannot be combined with a bearer token (bearerToken, bearerTokenEnv or auth "bearer"): both would set the Authorization header`},
		{"with an Authorization header", team, `"url": "https://t.example.com/mcp", "headers": {"authorization": "Basic x"}, "tokenExchange": {"audience": "a", "clientId": "c"}`, nil,
			`mcpServers.t.tokenExchange: cannot be combined with an Authorization header: the exchanged token is sent as it`},
		{"stdio", team, `"command": "x", "tokenExchange": {"audience": "a", "clientId": "c"}`, nil,
			`mcpServers.t.tokenExchange: is for a server with a url: a stdio server gets no token`},
		{"bad token type", team, `"url": "https://t.example.com/mcp", "tokenExchange": {"audience": "a", "clientId": "c", "subjectTokenType": "saml2"}`, nil,
			`mcpServers.t.tokenExchange.subjectTokenType: "saml2" is not one of access_token, id_token, jwt`},
		{"unknown field", team, `"url": "https://t.example.com/mcp", "tokenExchange": {"audience": "a", "clientId": "c", "scopes": "x"}`,
			&TokenExchange{Audience: "a", ClientID: "c", SubjectTokenType: "access_token"},
			`mcpServers.t.tokenExchange.scopes: unknown field (did you mean "scope"?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(`{`+tc.team+`"mcpServers": {"t": {`+tc.server+`}}}`), "/c/mcp.json", testOptions(env))
			if tc.want == nil {
				if err == nil {
					t.Fatalf("Parse succeeded: %+v", cfg.Servers["t"].TokenExchange)
				}
				if !strings.Contains(err.Error(), ": "+tc.err) {
					t.Errorf("error:\n got: %v\nwant: %s", err, tc.err)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("the error shows the client secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s := cfg.Servers["t"]
			if !reflect.DeepEqual(s.TokenExchange, tc.want) {
				t.Errorf("TokenExchange = %+v, want %+v", s.TokenExchange, tc.want)
			}
			if s.Isolation != IsolationUser {
				t.Errorf("Isolation = %q, want %q (implied)", s.Isolation, IsolationUser)
			}
			var warns []string
			if tc.err != "" {
				warns = []string{tc.err}
			}
			if !reflect.DeepEqual(cfg.Warnings, warns) {
				t.Errorf("warnings = %q, want %q", cfg.Warnings, warns)
			}
		})
	}
}

// TestTokenExchangeHash: the same URL exchanged for another audience is
// another upstream; the client secret changes nothing.
func TestTokenExchangeHash(t *testing.T) {
	hash := func(block string) string {
		t.Helper()
		cfg, err := Parse([]byte(`{"team": {"issuer": "https://id.example.com", "audience": "mcpgw"},
			"mcpServers": {"t": {"url": "https://t.example.com/mcp"`+block+`}}}`), "/c/mcp.json", testOptions(nil))
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Servers["t"].Hash
	}
	plain := hash("")
	a := hash(`, "tokenExchange": {"audience": "a", "clientId": "c", "clientSecret": "one"}`)
	a2 := hash(`, "tokenExchange": {"audience": "a", "clientId": "c", "clientSecret": "two"}`)
	b := hash(`, "tokenExchange": {"audience": "b", "clientId": "c"}`)
	if a == plain || a == b {
		t.Errorf("hashes: plain %s, audience a %s, audience b %s; want all different", plain, a, b)
	}
	if a != a2 {
		t.Errorf("the client secret changed the hash: %s, %s", a, a2)
	}
}
