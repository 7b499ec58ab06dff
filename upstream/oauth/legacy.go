package oauth

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
)

// Servers of the 2025-03-26 specification publish no protected resource
// metadata: the MCP server's origin is the authorization server, its
// metadata at /.well-known/oauth-authorization-server there. Some name an
// issuer under that origin (http://host/oauth, where their endpoints
// live) rather than the origin itself, which RFC 8414's check refuses
// though the document comes from the very origin the client was sent to.
// legacyIssuer accepts that document — and only it: same origin, served at
// the origin's root well-known path, naming an issuer on the same origin —
// by reading its issuer as the origin.
type legacyIssuer struct {
	base   http.RoundTripper
	origin string // scheme://host of the MCP server
}

// withLegacyIssuer returns hc with legacyIssuer in its transport, for a
// login to serverURL.
func withLegacyIssuer(hc *http.Client, serverURL string) *http.Client {
	u, err := url.Parse(serverURL)
	if err != nil || u.Host == "" {
		return hc
	}
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = &legacyIssuer{base: base, origin: u.Scheme + "://" + u.Host}
	return &c
}

func (l *legacyIssuer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusOK ||
		req.URL.Path != "/.well-known/oauth-authorization-server" || req.URL.Scheme+"://"+req.URL.Host != l.origin {
		return resp, err
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var meta map[string]any
	if json.Unmarshal(data, &meta) == nil {
		if iss, _ := meta["issuer"].(string); iss != l.origin {
			if u, err := url.Parse(iss); err == nil && u.Scheme+"://"+u.Host == l.origin {
				meta["issuer"] = l.origin
				if b, err := json.Marshal(meta); err == nil {
					data = b
				}
			}
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	resp.Header.Del("Content-Length")
	return resp, nil
}
