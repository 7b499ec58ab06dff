package registry

import (
	"encoding/base64"
	"maps"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// Each user's own OAuth login (issue 43): in team mode, a server with
// "auth": "oauth" and "isolation": "user" is reached with the login of the
// user who calls, which they make with `mcpgw login` against the team
// daemon. With team.store the logins are kept in the store, sealed with
// team.credentialKey; without it, in the daemon's memory.

// CredentialKeySize is the size of team.credentialKey: an AES-256 key.
const CredentialKeySize = 32

// UsersOwnLogin reports whether, in team mode, s is reached with each
// user's own OAuth login rather than one shared by everyone.
func (s *Server) UsersOwnLogin() bool {
	return s.Auth == AuthOAuth && s.Isolation == IsolationUser && s.IsRemote()
}

// credentialKey interpolates and decodes team.credentialKey. Its value
// never appears in errors. Unlike every other value it may name mcpgw's
// own variables: the key is the daemon's, and no upstream receives it.
func (p *configParser) credentialKey(v *hujson.Value, field, raw string) []byte {
	lookup := p.ownLookup
	if lookup == nil { // an imported file's: no own variables there
		lookup = p.lookup
	}
	var missing []string
	s := interpolate(raw, lookup, &missing)
	for _, name := range missing {
		p.failf(v, field, "environment variable %s is not set", name)
	}
	if len(missing) > 0 {
		return nil
	}
	s = strings.TrimSpace(s)
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		key, err = base64.RawStdEncoding.DecodeString(s)
	}
	switch {
	case s == "":
		p.failf(v, field, "must not be empty: 32 random bytes, base64 encoded (openssl rand -base64 32)")
	case err != nil:
		p.failf(v, field, "is not base64: want 32 random bytes, base64 encoded (openssl rand -base64 32)")
	case len(key) != CredentialKeySize:
		p.failf(v, field, "is %d bytes once decoded; want %d (openssl rand -base64 32)", len(key), CredentialKeySize)
	default:
		return key
	}
	return nil
}

// oauthMember is an oauth block's member that only a server shared by
// everyone may have, and why.
type oauthMember struct {
	v     *hujson.Value
	field string
	srv   *Server
	why   string
}

// checkUserLogins refuses, on a server reached with each user's own
// login, what only a shared login may have (a client secret, which every
// user's CLI would be sent; the client credentials grant), and requires
// team.credentialKey where users' logins are kept in team.store: a server
// reached with each user's own login, and a store.
func (p *configParser) checkUserLogins(cfg *Config, teamV *hujson.Value) {
	t := cfg.Team
	if t != nil {
		for _, m := range p.sharedOnly {
			if m.srv.UsersOwnLogin() {
				p.failf(m.v, m.field, "%s", m.why)
			}
		}
	}
	if t == nil || t.Store == "" || t.CredentialKey != nil || teamV == nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		if s := cfg.Servers[name]; s.UsersOwnLogin() {
			p.failf(teamV, "team.credentialKey", "is required: server %q keeps each user's own OAuth login (\"isolation\": \"user\") in team.store, sealed with this key; set 32 random bytes, base64 encoded (openssl rand -base64 32), e.g. \"credentialKey\": \"${MCPGW_CREDENTIAL_KEY}\"", s.Name)
			return
		}
	}
}
