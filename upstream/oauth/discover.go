package oauth

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// authServer is the authorization server a server's challenge leads to.
type authServer struct {
	challenges []oauthex.Challenge
	prm        *oauthex.ProtectedResourceMetadata
	meta       *oauthex.AuthServerMeta // nil: it publishes none (protocol 2025-03-26)
	issuer     string
	tokenURL   string
}

// discover finds the authorization server of serverURL from its challenge,
// as the go-sdk's flow does: the protected resource's metadata (RFC 9728)
// and the first authorization server it names, with that one's metadata
// (RFC 8414) if it publishes any.
func discover(ctx context.Context, hc *http.Client, challenge *http.Response, serverURL string) (*authServer, error) {
	challenges, _ := oauthex.ParseWWWAuthenticate(challenge.Header.Values("WWW-Authenticate"))
	var metadataURL string
	for _, c := range challenges {
		if v := c.Params["resource_metadata"]; v != "" {
			metadataURL = v
		}
	}
	prm := resourceMetadata(ctx, hc, metadataURL, serverURL)
	as := &authServer{challenges: challenges, prm: prm, issuer: prm.AuthorizationServers[0]}
	asm, err := auth.GetAuthServerMetadata(ctx, as.issuer, hc)
	if err != nil {
		return nil, fmt.Errorf("getting the authorization server's metadata: %w", err)
	}
	as.tokenURL = as.issuer + "/token"
	if asm != nil {
		as.meta, as.issuer, as.tokenURL = asm, asm.Issuer, asm.TokenEndpoint
	}
	return as, nil
}

// scopes are those the challenge asks for.
func (as *authServer) scopes() []string {
	var scopes []string
	for _, c := range as.challenges {
		if v := c.Params["scope"]; v != "" {
			scopes = strings.Fields(v)
		}
	}
	return scopes
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
