package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// challenge asks the server without credentials for the 401 (or 403)
// whose WWW-Authenticate header starts the flow. It speaks as the pool
// does, the newest protocol the server offers: the go-sdk's client sends
// server/discover of protocol 2026-07-28 first and initialize to a server
// of the 2025 era, which a server of 2026-07-28 alone answers 400. A
// server may answer its handshake without credentials and ask for them
// only from the next request on: then its tool list is asked too. A
// server that asks for nothing even then is logged in to from its
// published metadata alone (the configuration says it uses OAuth), as if
// it had answered 401 without a header.
func challenge(ctx context.Context, hc *http.Client, serverURL string) (*http.Request, *http.Response, error) {
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	rec := &challengeRecorder{base: base}
	c := *hc
	c.Transport = rec
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpgw", Version: "login"}, nil)
	t := &mcp.StreamableClientTransport{Endpoint: serverURL, HTTPClient: &c, MaxRetries: -1, DisableStandaloneSSE: true}
	cs, err := client.Connect(ctx, t, nil)
	if err == nil {
		_, err = cs.ListTools(ctx, nil)
		_ = cs.Close()
	}
	if resp := rec.challenge(); resp != nil {
		return resp.Request, resp, nil
	}
	if err != nil {
		if status := rec.failure(); status != "" {
			return nil, nil, fmt.Errorf("%s answered %s without credentials: %w", serverURL, status, err)
		}
		return nil, nil, fmt.Errorf("asking %s without credentials: %w", serverURL, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL, nil)
	if err != nil {
		return nil, nil, err
	}
	synthetic := &http.Response{
		Status: "401 Unauthorized", StatusCode: http.StatusUnauthorized, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: req,
	}
	return req, synthetic, nil
}

// errChallenged ends the probe's requests once the server has asked for
// credentials: the rest of the handshake has nothing more to say.
var errChallenged = errors.New("the server asks for credentials")

// challengeRecorder is the probe's transport: it keeps the first answer
// that asks for credentials (its status, headers and request; the body is
// not needed) and the last status of another refusal.
type challengeRecorder struct {
	base http.RoundTripper

	mu     sync.Mutex
	asked  *http.Response
	status string // of the last answer >= 300 that did not ask
}

func (r *challengeRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if r.challenge() != nil {
		return nil, errChallenged
	}
	resp, err := r.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case asks(resp) && r.asked == nil:
		r.asked = &http.Response{
			Status: resp.Status, StatusCode: resp.StatusCode, Proto: resp.Proto, ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor,
			Header: resp.Header.Clone(), Body: http.NoBody, Request: req,
		}
	case resp.StatusCode >= 300:
		r.status = resp.Status
	}
	return resp, nil
}

func (r *challengeRecorder) challenge() *http.Response {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.asked
}

func (r *challengeRecorder) failure() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// asks reports whether a server's answer asks for credentials.
func asks(resp *http.Response) bool {
	return resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden
}
