package registry

import (
	"maps"

	"github.com/tailscale/hujson"
)

// OAuth is a server's "oauth" block, in the field names of Pi's MCP
// adapter. Every field is optional: "auth": "oauth" alone discovers
// everything (protected-resource and authorization-server metadata, and
// dynamic client registration).
type OAuth struct {
	ClientID              string // a pre-registered client
	ClientSecret          string // its secret (interpolated; "!cmd" allowed as for headers)
	ClientMetadataURL     string // a client ID metadata document
	Scope                 string // space-separated scopes to ask for
	RedirectURI           string // the registered redirect URI, when fixed
	GrantType             string // "authorization_code" (default) or "client_credentials"
	AuthServerMetadataURL string // skip discovery of the authorization server
	AuthorizationParams   map[string]string
	// AllowPrivateNetwork lets OAuth endpoints (metadata, registration,
	// tokens) be on private addresses other than loopback.
	AllowPrivateNetwork bool
}

// OAuth grant types.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
)

// oauth reads a server's "oauth" block.
func (p *configParser) oauth(st *serverParse, m jsonMember, f string) {
	if m.value.Value.Kind() == 'f' { // Pi's adapter: no OAuth
		st.httpOnly = append(st.httpOnly, m)
		return
	}
	obj, ok := m.value.Value.(*hujson.Object)
	if !ok {
		p.failf(m.value, f, "must be an object or false, got %s", jsonKindName(m.value))
		return
	}
	o := &OAuth{}
	for _, om := range p.members(obj, f) {
		of := joinField(f, om.name)
		v := om.value
		str := func(dst *string) {
			if x, ok := p.str(v, of); ok {
				*dst = p.interpolate(v, of, x)
			}
		}
		switch om.name {
		case "clientId":
			str(&o.ClientID)
		case "clientSecret":
			if x, ok := p.str(v, of); ok {
				o.ClientSecret = p.secrets(v, of, map[string]string{"": x})[""]
				p.sharedOnly = append(p.sharedOnly, oauthMember{v: v, field: of, srv: st.s,
					why: "would be sent to every user who logs in (each user's login runs on their own machine); leave it out: a public client (clientId alone, or none for dynamic registration) with PKCE"})
			}
		case "clientMetadataUrl":
			str(&o.ClientMetadataURL)
		case "scope":
			str(&o.Scope)
		case "redirectUri":
			str(&o.RedirectURI)
		case "authServerMetadataUrl":
			str(&o.AuthServerMetadataURL)
		case "grantType":
			if x, ok := p.str(v, of); ok && p.oneOf(v, of, x, GrantAuthorizationCode, GrantClientCredentials) {
				o.GrantType = x
				if x == GrantClientCredentials {
					p.sharedOnly = append(p.sharedOnly, oauthMember{v: v, field: of, srv: st.s,
						why: `"client_credentials" logs in as one machine account, not as each user; remove "isolation": "user" to share it, or this grant to have each user log in`})
				}
			}
		case "allowPrivateNetwork":
			if b, ok := p.boolean(v, of); ok {
				o.AllowPrivateNetwork = b
			}
		case "authorizationParams":
			if params, ok := p.stringMap(v, of); ok {
				o.AuthorizationParams = maps.Clone(params)
			}
		default:
			p.unknownField(om, of, oauthFields, nil)
		}
	}
	if o.GrantType == GrantClientCredentials && o.ClientID == "" {
		p.failf(m.value, f, `grantType "client_credentials" needs a clientId (and usually a clientSecret)`)
	}
	st.s.OAuth = o
	if st.s.Auth == "" {
		st.s.Auth = AuthOAuth
	}
	st.httpOnly = append(st.httpOnly, m)
}

var oauthFields = []string{"clientId", "clientSecret", "clientMetadataUrl", "scope", "redirectUri", "grantType", "authServerMetadataUrl", "authorizationParams", "allowPrivateNetwork"}
