package registry

import (
	"errors"
	"fmt"
	neturl "net/url"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/mcpgw/mcpgw/internal/loopback"
)

// Team is the top-level "team" block: team mode, one daemon for a whole
// team (issue 43, DESIGN decision 16). With it, every request to /mcp,
// the control endpoints and the status page needs a bearer token (a JWT)
// from Issuer, and what the daemon records and keeps carries the user it
// names. Without it (Config.Team nil), nothing of team mode is loaded.
//
//	"team": {
//	  "issuer": "https://login.example.com/realms/eng",
//	  "audience": "mcpgw",
//	  "userClaim": "preferred_username", // default "sub"
//	  "groupsClaim": "groups",           // optional
//	  "store": "redis://redis:6379/0",   // optional: what replicas share
//	  "credentialKey": "${MCPGW_CREDENTIAL_KEY}", // with store: seals users' logins
//	}
//
// Values are interpolated (${VAR}). The issuer may change at a reload:
// new requests are checked against the new one.
type Team struct {
	// Issuer is the OpenID Connect issuer whose tokens are accepted: its
	// discovery document (ISSUER/.well-known/openid-configuration) names
	// its keys. https, or plain http on a loopback host (for tests).
	Issuer string
	// Audience must be among a token's "aud".
	Audience string
	// UserClaim names the claim that says who the user is; default "sub".
	UserClaim string
	// GroupsClaim names the claim that lists the user's groups; "" for
	// none.
	GroupsClaim string
	// Store is the shared store of replicas (redis:// or rediss://):
	// pending approvals and decisions, and HTTP sessions with their
	// activations and grants (gateway/teamstore); read at start. ""
	// keeps them in this process's memory: one replica.
	Store string
	// CredentialKey seals each user's OAuth logins (servers with "auth":
	// "oauth" and "isolation": "user") in Store: 32 bytes, given base64
	// encoded. Required when Store is set and such a server is
	// configured; nil otherwise. It may name mcpgw's own variables
	// (${MCPGW_CREDENTIAL_KEY}): no upstream ever receives it.
	CredentialKey []byte
}

// DefaultUserClaim is Team.UserClaim when the file sets none.
const DefaultUserClaim = "sub"

var teamFields = []string{"issuer", "audience", "userClaim", "groupsClaim", "store", "credentialKey"}

// team reads the "team" block. Every problem names its field.
func (p *configParser) team(v *hujson.Value, cfg *Config) {
	if jsonIsNull(v) {
		return
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		p.failf(v, "team", "must be an object, got %s", jsonKindName(v))
		return
	}
	t := &Team{UserClaim: DefaultUserClaim}
	var issuerSeen, audienceSeen bool
	for _, m := range p.members(obj, "team") {
		f := joinField("team", m.name)
		switch m.name {
		case "issuer":
			issuerSeen = true
			if raw, ok := p.str(m.value, f); ok {
				t.Issuer = p.issuer(m.value, f, raw)
			}
		case "audience":
			audienceSeen = true
			if raw, ok := p.str(m.value, f); ok {
				if t.Audience = p.interpolate(m.value, f, raw); t.Audience == "" {
					p.failf(m.value, f, "must not be empty")
				}
			}
		case "userClaim", "groupsClaim":
			raw, ok := p.str(m.value, f)
			if !ok {
				continue
			}
			if raw == "" {
				p.failf(m.value, f, "must not be empty")
				continue
			}
			if m.name == "userClaim" {
				t.UserClaim = raw
			} else {
				t.GroupsClaim = raw
			}
		case "store":
			if raw, ok := p.str(m.value, f); ok && raw != "" {
				t.Store = p.store(m.value, f, raw)
			}
		case "credentialKey":
			if raw, ok := p.str(m.value, f); ok {
				t.CredentialKey = p.credentialKey(m.value, f, raw)
			}
		default:
			p.unknownField(m, f, teamFields, nil)
		}
	}
	if !issuerSeen {
		p.failf(v, "team.issuer", "is required: the OpenID Connect issuer whose tokens the daemon accepts")
	}
	if !audienceSeen {
		p.failf(v, "team.audience", "is required: the audience a token must be issued for")
	}
	cfg.Team = t
}

// issuer interpolates and checks an issuer URL: https, or http on a
// loopback host; no query or fragment (OpenID Connect Discovery 1.0 §2).
func (p *configParser) issuer(v *hujson.Value, field, raw string) string {
	s := p.interpolate(v, field, raw)
	u, err := neturl.Parse(s)
	switch {
	case s == "":
		err = errors.New("must not be empty")
	case err != nil:
	case u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		err = fmt.Errorf("%q is not an https URL", raw)
	case u.Scheme == "http" && !loopback.IsHost(u.Hostname()):
		err = fmt.Errorf("%q: an issuer must be https (plain http only on a loopback host)", raw)
	case u.RawQuery != "" || u.Fragment != "":
		err = fmt.Errorf("%q: an issuer URL has no query or fragment", raw)
	default:
		return s
	}
	p.fail(v, field, raw, err)
	return ""
}

// store interpolates and checks the shared store's URL. Its password, if
// any, stays out of errors: they quote nothing of the URL but its scheme.
func (p *configParser) store(v *hujson.Value, field, raw string) string {
	s := p.interpolateSecret(v, field, raw)
	u, err := neturl.Parse(s)
	switch {
	case err != nil:
		err = errors.New("is not a URL")
	case u.Scheme != "redis" && u.Scheme != "rediss":
		scheme, _, _ := strings.Cut(s, ":")
		err = fmt.Errorf("scheme %q is not supported; want redis:// or rediss://", scheme)
	case u.Host == "":
		err = errors.New("has no host; want redis://HOST:PORT")
	default:
		return s
	}
	p.fail(v, field, "", err)
	return ""
}
