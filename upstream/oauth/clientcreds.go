package oauth

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// ClientCredentials obtains a token with the client credentials grant, for
// machine accounts ("grantType": "client_credentials"): the same discovery
// as a login, then the client's ID and secret for a token. No person is
// involved, so the daemon runs it itself, and again when the token
// expires.
func ClientCredentials(ctx context.Context, opts LoginOptions) (*Credentials, error) {
	hc := opts.HTTPClient
	if hc == nil {
		hc = HTTPClient(opts.Client.AllowPrivateNetwork)
	}
	if opts.Client.ClientID == "" {
		return nil, fmt.Errorf("the client credentials grant needs oauth.clientId")
	}
	resp := opts.Challenge
	if resp == nil {
		var err error
		if _, resp, err = challenge(ctx, hc, opts.ServerURL); err != nil {
			return nil, err
		}
		defer resp.Body.Close()
	}
	as, err := discover(ctx, hc, resp, opts.ServerURL)
	if err != nil {
		return nil, err
	}
	scopes := as.scopes()
	if len(scopes) == 0 {
		scopes = as.prm.ScopesSupported
	}
	scopes = unionScopes(scopes, strings.Fields(opts.Client.Scope))
	style := oauth2.AuthStyleInHeader
	if as.meta != nil {
		if m := as.meta.TokenEndpointAuthMethodsSupported; len(m) > 0 && !slices.Contains(m, "client_secret_basic") && slices.Contains(m, "client_secret_post") {
			style = oauth2.AuthStyleInParams
		}
	}
	c := &Credentials{
		ServerURL: opts.ServerURL, Issuer: as.issuer, ClientID: opts.Client.ClientID, ClientSecret: opts.Client.ClientSecret,
		TokenURL: as.tokenURL, AuthStyle: int(style), Scopes: scopes, Resource: as.prm.Resource,
		Grant: "client_credentials",
	}
	if c.Token, err = c.clientCredentials(ctx, hc); err != nil {
		return nil, err
	}
	if err := opts.Store.Save(c); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Credentials) clientCredentials(ctx context.Context, hc *http.Client) (*oauth2.Token, error) {
	cc := clientcredentials.Config{
		ClientID: c.ClientID, ClientSecret: c.ClientSecret, TokenURL: c.TokenURL,
		Scopes: c.Scopes, AuthStyle: oauth2.AuthStyle(c.AuthStyle),
	}
	if c.Resource != "" {
		cc.EndpointParams = url.Values{"resource": {c.Resource}}
	}
	if hc != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, hc)
	}
	tok, err := cc.Token(ctx)
	if err != nil {
		return nil, fmt.Errorf("client credentials grant: %w", err)
	}
	return tok, nil
}
