package oauth

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
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
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	var metadataURL string
	var scopes []string
	for _, c := range challenges {
		if v := c.Params["resource_metadata"]; v != "" {
			metadataURL = v
		}
		if v := c.Params["scope"]; v != "" {
			scopes = strings.Fields(v)
		}
	}
	prm := resourceMetadata(ctx, hc, metadataURL, opts.ServerURL)
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	scopes = unionScopes(scopes, strings.Fields(opts.Client.Scope))
	asm, err := auth.GetAuthServerMetadata(ctx, prm.AuthorizationServers[0], hc)
	if err != nil {
		return nil, fmt.Errorf("getting the authorization server's metadata: %w", err)
	}
	tokenURL := prm.AuthorizationServers[0] + "/token"
	style := oauth2.AuthStyleInHeader
	if asm != nil {
		tokenURL = asm.TokenEndpoint
		if m := asm.TokenEndpointAuthMethodsSupported; len(m) > 0 && !slices.Contains(m, "client_secret_basic") && slices.Contains(m, "client_secret_post") {
			style = oauth2.AuthStyleInParams
		}
	}
	c := &Credentials{
		ServerURL: opts.ServerURL, ClientID: opts.Client.ClientID, ClientSecret: opts.Client.ClientSecret,
		TokenURL: tokenURL, AuthStyle: int(style), Scopes: scopes, Resource: prm.Resource,
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

// resourceMetadata finds the server's protected-resource metadata (RFC
// 9728): at the URL its challenge names, else at the well-known paths; a
// server without any is its own authorization server (protocol
// 2025-03-26).
func resourceMetadata(ctx context.Context, hc *http.Client, metadataURL, serverURL string) *oauthex.ProtectedResourceMetadata {
	var tries [][2]string // metadata URL, resource
	if metadataURL != "" {
		tries = append(tries, [2]string{metadataURL, serverURL})
	}
	if u, err := url.Parse(serverURL); err == nil {
		m := *u
		m.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/")
		tries = append(tries, [2]string{m.String(), serverURL})
		m.Path = "/.well-known/oauth-protected-resource"
		root := *u
		root.Path = ""
		tries = append(tries, [2]string{m.String(), root.String()})
	}
	for _, t := range tries {
		if prm, err := oauthex.GetProtectedResourceMetadata(ctx, t[0], t[1], hc); err == nil && prm != nil && len(prm.AuthorizationServers) > 0 {
			return prm
		}
	}
	u, _ := url.Parse(serverURL)
	origin := serverURL
	if u != nil {
		u.Path, u.RawQuery = "", ""
		origin = u.String()
	}
	return &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{origin}, Resource: serverURL}
}
