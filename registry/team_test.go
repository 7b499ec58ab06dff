package registry

import (
	"reflect"
	"strings"
	"testing"
)

func TestTeamBlock(t *testing.T) {
	cfg, err := Load(absTestdata(t, "valid-team.json"), testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := &Team{Issuer: "https://login.example.com/realms/eng", Audience: "mcpgw", UserClaim: "preferred_username", GroupsClaim: "groups"}
	if !reflect.DeepEqual(cfg.Team, want) {
		t.Errorf("Team = %+v, want %+v", cfg.Team, want)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings: %q", cfg.Warnings)
	}

	// Without the block, no team mode.
	cfg, err = Load(absTestdata(t, "valid-minimal.json"), testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Team != nil {
		t.Errorf("Team = %+v without a team block", cfg.Team)
	}
}

func TestTeamBlockValues(t *testing.T) {
	env := map[string]string{"ISSUER": "https://id.example.com", "REDIS_PASSWORD": "hunter2"}
	for _, tc := range []struct {
		name string
		team string // the block's members
		want *Team  // nil: an error
		err  string // the error, or the one warning
	}{
		{"defaults", `"issuer": "https://id.example.com", "audience": "a"`,
			&Team{Issuer: "https://id.example.com", Audience: "a", UserClaim: "sub"}, ""},
		{"interpolated", `"issuer": "${ISSUER}/realms/x", "audience": "a"`,
			&Team{Issuer: "https://id.example.com/realms/x", Audience: "a", UserClaim: "sub"}, ""},
		{"http on loopback", `"issuer": "http://127.0.0.1:8080", "audience": "a"`,
			&Team{Issuer: "http://127.0.0.1:8080", Audience: "a", UserClaim: "sub"}, ""},
		{"http on localhost", `"issuer": "http://localhost:8080/", "audience": "a"`,
			&Team{Issuer: "http://localhost:8080/", Audience: "a", UserClaim: "sub"}, ""},
		{"store", `"issuer": "https://id.example.com", "audience": "a", "store": "redis://:${REDIS_PASSWORD}@redis:6379/0"`,
			&Team{Issuer: "https://id.example.com", Audience: "a", UserClaim: "sub", Store: "redis://:hunter2@redis:6379/0"}, ""},
		{"http elsewhere", `"issuer": "http://id.example.com", "audience": "a"`, nil,
			`team.issuer: "http://id.example.com": an issuer must be https (plain http only on a loopback host)`},
		{"not a URL", `"issuer": "id.example.com", "audience": "a"`, nil,
			`team.issuer: "id.example.com" is not an https URL`},
		{"query", `"issuer": "https://id.example.com/?x=1", "audience": "a"`, nil,
			`team.issuer: "https://id.example.com/?x=1": an issuer URL has no query or fragment`},
		{"unset variable", `"issuer": "${NOPE}", "audience": "a"`, nil,
			`team.issuer: must not be empty`},
		{"no issuer", `"audience": "a"`, nil,
			`team.issuer: is required: the OpenID Connect issuer whose tokens the daemon accepts`},
		{"empty audience", `"issuer": "https://id.example.com", "audience": ""`, nil,
			`team.audience: must not be empty`},
		{"empty user claim", `"issuer": "https://id.example.com", "audience": "a", "userClaim": ""`, nil,
			`team.userClaim: must not be empty`},
		{"groups claim a number", `"issuer": "https://id.example.com", "audience": "a", "groupsClaim": 3`, nil,
			`team.groupsClaim: must be a string, got number 3; quote it: "3"`},
		{"store not redis", `"issuer": "https://id.example.com", "audience": "a", "store": "postgres://u:hunter2@db/x"`, nil,
			`team.store: scheme "postgres" is not supported; want redis:// or rediss://`},
		{"store without host", `"issuer": "https://id.example.com", "audience": "a", "store": "redis:///0"`, nil,
			`team.store: has no host; want redis://HOST:PORT`},
		{"unknown field", `"issuer": "https://id.example.com", "audience": "a", "usrClaim": "email"`,
			&Team{Issuer: "https://id.example.com", Audience: "a", UserClaim: "sub"},
			`team.usrClaim: unknown field (did you mean "userClaim"?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(`{"team": {`+tc.team+`}}`), "/c/mcp.json", testOptions(env))
			if tc.want == nil {
				if err == nil {
					t.Fatalf("Parse succeeded: %+v", cfg.Team)
				}
				// "/c/mcp.json:1:N: " before the field.
				_, got, _ := strings.Cut(err.Error(), ": ")
				if got != tc.err {
					t.Errorf("error:\n got: %s\nwant: %s", got, tc.err)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("the error shows the store's password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.Team, tc.want) {
				t.Errorf("Team = %+v, want %+v", cfg.Team, tc.want)
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

// TestTeamCredentialKey: team.credentialKey is 32 bytes, base64, read from
// mcpgw's own variables too; it is required, naming the field and the
// server, when team.store keeps users' own OAuth logins; its value is in
// no error.
func TestTeamCredentialKey(t *testing.T) {
	key := "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=" // bytes 0..31
	env := map[string]string{"MCPGW_CREDENTIAL_KEY": key, "SHORT": "c2hvcnQ="}
	team := func(extra string) string {
		return `"team": {"issuer": "https://id.example.com", "audience": "a", "store": "redis://r:6379/0"` + extra + `}`
	}
	perUser := `"mcpServers": {"tickets": {"url": "https://t.example.com/mcp", "auth": "oauth", "isolation": "user"}}`
	for _, tc := range []struct {
		name, file string
		err        string // "" for none
	}{
		{"own variable", `{` + team(`, "credentialKey": "${MCPGW_CREDENTIAL_KEY}"`) + `, ` + perUser + `}`, ""},
		{"literal", `{` + team(`, "credentialKey": "`+key+`"`) + `}`, ""},
		{"missing with a per-user login", `{` + perUser + `, ` + team("") + `}`,
			`team.credentialKey: is required: server "tickets" keeps each user's own OAuth login ("isolation": "user") in team.store, sealed with this key; set 32 random bytes, base64 encoded (openssl rand -base64 32), e.g. "credentialKey": "${MCPGW_CREDENTIAL_KEY}"`},
		{"missing without a store", `{"team": {"issuer": "https://id.example.com", "audience": "a"}, ` + perUser + `}`, ""},
		{"missing with no per-user login", `{` + team("") + `, "mcpServers": {"t": {"url": "https://t.example.com/mcp", "auth": "oauth"}}}`, ""},
		{"too short", `{` + team(`, "credentialKey": "${SHORT}"`) + `}`,
			`team.credentialKey: is 5 bytes once decoded; want 32 (openssl rand -base64 32)`},
		{"not base64", `{` + team(`, "credentialKey": "not base64!"`) + `}`,
			`team.credentialKey: is not base64: want 32 random bytes, base64 encoded (openssl rand -base64 32)`},
		{"unset", `{` + team(`, "credentialKey": "${MCPGW_NOPE}"`) + `}`,
			`team.credentialKey: environment variable MCPGW_NOPE is not set`},
		// What only a login shared by everyone may have.
		{"client secret on a per-user login", `{"team": {"issuer": "https://id.example.com", "audience": "a"}, "mcpServers": {"tickets": {"url": "https://t.example.com/mcp", "oauth": {"clientId": "c", "clientSecret": "s"}, "isolation": "user"}}}`,
			`mcpServers.tickets.oauth.clientSecret: would be sent to every user who logs in (each user's login runs on their own machine); leave it out: a public client (clientId alone, or none for dynamic registration) with PKCE`},
		{"client credentials on a per-user login", `{"team": {"issuer": "https://id.example.com", "audience": "a"}, "mcpServers": {"tickets": {"isolation": "user", "url": "https://t.example.com/mcp", "oauth": {"clientId": "c", "grantType": "client_credentials"}}}}`,
			`mcpServers.tickets.oauth.grantType: "client_credentials" logs in as one machine account, not as each user; remove "isolation": "user" to share it, or this grant to have each user log in`},
		{"client secret on a shared login", `{"team": {"issuer": "https://id.example.com", "audience": "a"}, "mcpServers": {"tickets": {"url": "https://t.example.com/mcp", "oauth": {"clientId": "c", "clientSecret": "s"}}}}`, ""},
		{"client secret outside team mode", `{"mcpServers": {"tickets": {"url": "https://t.example.com/mcp", "oauth": {"clientId": "c", "clientSecret": "s"}, "isolation": "user"}}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.file), "/c/mcp.json", testOptions(env))
			if tc.err != "" {
				if err == nil {
					t.Fatalf("Parse succeeded: %+v", cfg.Team)
				}
				_, got, _ := strings.Cut(err.Error(), ": ")
				if got != tc.err {
					t.Errorf("error:\n got: %s\nwant: %s", got, tc.err)
				}
				if strings.Contains(err.Error(), key) {
					t.Errorf("the error shows the key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(tc.file, "credentialKey") {
				if len(cfg.Team.CredentialKey) != 32 || cfg.Team.CredentialKey[31] != 31 {
					t.Errorf("CredentialKey = %v", cfg.Team.CredentialKey)
				}
			} else if cfg.Team != nil && cfg.Team.CredentialKey != nil {
				t.Errorf("CredentialKey = %v without one", cfg.Team.CredentialKey)
			}
		})
	}
}
