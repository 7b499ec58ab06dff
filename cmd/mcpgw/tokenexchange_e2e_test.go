//go:build unix

package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/identity"
	"github.com/mcpgw/mcpgw/gateway/identity/testissuer"
	"github.com/mcpgw/mcpgw/internal/e2e"
)

// audienceServer is an MCP server over Streamable HTTP that accepts only
// tokens of the issuer for its audience, and whose tool whoami answers
// the subject of the token its call came with. It records, by its own
// session, the subjects of the tokens each request carried.
type audienceServer struct {
	URL string

	mu        sync.Mutex
	bySession map[string][]string // Mcp-Session-Id → the subjects seen on it, in order
	refused   int                 // requests without a good token
}

func newAudienceServer(t *testing.T, iss *testissuer.Issuer, audience string) *audienceServer {
	t.Helper()
	a := &audienceServer{bySession: map[string][]string{}}
	v, err := identity.NewVerifier(identity.Config{Issuer: iss.URL, Audience: audience}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "tickets", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "the subject of the token this call came with"},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			who := "nobody"
			if ti := req.Extra.TokenInfo; ti != nil {
				who = ti.UserID
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: who}}}, nil, nil
		})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	verify := func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		u, err := v.Verify(ctx, token)
		if err != nil {
			a.mu.Lock()
			a.refused++
			a.mu.Unlock()
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: u.Name, Expiration: u.Expiry}, nil
	}
	record := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ti := auth.TokenInfoFromContext(r.Context())
			rec := &sessionRecorder{ResponseWriter: w}
			next.ServeHTTP(rec, r)
			id := r.Header.Get("Mcp-Session-Id")
			if id == "" {
				id = rec.Header().Get("Mcp-Session-Id")
			}
			if ti != nil && id != "" {
				a.mu.Lock()
				a.bySession[id] = append(a.bySession[id], ti.UserID)
				a.mu.Unlock()
			}
		})
	}
	hs := httptest.NewServer(auth.RequireBearerToken(verify, nil)(record(handler)))
	t.Cleanup(hs.Close)
	a.URL = hs.URL + "/mcp"
	return a
}

// sessionRecorder passes a response through; it lets the recorder read
// the session ID the response gives.
type sessionRecorder struct{ http.ResponseWriter }

func (r *sessionRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// sessions returns, for each upstream session, the subjects its requests
// carried (each list sorted and without repeats).
func (a *audienceServer) sessions() map[string][]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string][]string{}
	for id, subs := range a.bySession {
		s := slices.Clone(subs)
		slices.Sort(s)
		out[id] = slices.Compact(s)
	}
	return out
}

// TestTokenExchangeE2E: an HTTP server marked "tokenExchange" in team
// mode is reached with each user's own token, exchanged at the issuer
// for its audience. The upstream accepts only tokens for that audience
// and answers whose token each call came with: alice's calls name alice,
// bob's bob; each of its sessions saw one subject only, so no token of
// alice's was sent for bob. Each user's token is exchanged once and kept
// for their later calls. carol, whom the issuer refuses, gets an error
// naming the refusal, and the others' calls go on working. mcpgw's client
// secret is a "!cmd" value, run at connect.
func TestTokenExchangeE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	iss := e2e.NewIssuer(t)
	iss.AllowClient("mcpgw-gateway", "s3cret")
	iss.RefuseExchange("carol")
	up := newAudienceServer(t, iss, "tickets")

	d := e2e.StartTeamDaemon(t, iss, e2e.Team{Servers: map[string]any{
		"tickets": map[string]any{"url": up.URL, "tokenExchange": map[string]any{
			"audience": "tickets", "scope": "tickets:read", "clientId": "mcpgw-gateway", "clientSecret": "!echo s3cret",
		}},
	}})
	as := d.As
	whoami := e2e.MCPCall(map[string]any{"tool": "tickets_whoami"})

	a := e2e.GoClient(t, as("alice"), []e2e.Step{whoami, whoami})
	b := e2e.GoClient(t, as("bob"), []e2e.Step{whoami, whoami})
	ar, br := (<-a).Check(t), (<-b).Check(t)
	for i := range 2 {
		if got := ar[i].Text(); ar[i].IsError() || got != "alice" {
			t.Errorf("alice's call %d reached the upstream as %s", i+1, ar[i])
		}
		if got := br[i].Text(); br[i].IsError() || got != "bob" {
			t.Errorf("bob's call %d reached the upstream as %s", i+1, br[i])
		}
	}

	c := e2e.RunClient(t, as("carol"), []e2e.Step{whoami})
	if !c[0].IsError() || !strings.Contains(c[0].Text(), "the issuer refused to exchange carol's token: invalid_grant") {
		t.Errorf("carol's call: %s; want an error saying the issuer refused to exchange her token", c[0])
	}
	// alice again, after carol's refusal: still served, with her kept token.
	if r := e2e.RunClient(t, as("alice"), []e2e.Step{whoami}); r[0].IsError() || r[0].Text() != "alice" {
		t.Errorf("alice's call after carol's refusal: %s", r[0])
	}

	// The status report shows each user their own upstream: carol's
	// refusal to her, alice's connection to alice.
	for _, who := range []struct{ user, state, err string }{
		{"carol", "failed", "the issuer refused to exchange carol's token"},
		{"alice", "connected", ""},
	} {
		r := e2e.DaemonStatusAs(t, d.URL, d.Token(who.user))
		if len(r.Servers) != 1 {
			t.Fatalf("status as %s: %+v", who.user, r.Servers)
		}
		s := r.Servers[0]
		if !s.PerUser || s.YourState != who.state || (who.err == "") != (s.YourError == "") || !strings.Contains(s.YourError, who.err) {
			t.Errorf("status as %s: per user %v, yours %q %q; want %q %q", who.user, s.PerUser, s.YourState, s.YourError, who.state, who.err)
		}
	}

	// What the upstream saw: each of its sessions carried one user's
	// tokens only, and alice's and bob's both came.
	var subjects []string
	for id, subs := range up.sessions() {
		if len(subs) != 1 {
			t.Errorf("upstream session %s carried the tokens of %q: one user's token was sent for another", id, subs)
		}
		subjects = append(subjects, subs...)
	}
	slices.Sort(subjects)
	if !slices.Equal(slices.Compact(slices.Clone(subjects)), []string{"alice", "bob"}) {
		t.Errorf("the upstream was reached as %q, want alice and bob", subjects)
	}
	up.mu.Lock()
	refused := up.refused
	up.mu.Unlock()
	if refused != 0 {
		t.Errorf("the upstream refused %d requests' tokens", refused)
	}

	// What the issuer was asked: one exchange each for alice and bob, kept
	// for their later calls; carol's refused.
	bySubject := map[string]int{}
	for _, ex := range iss.Exchanges() {
		if ex.ClientID != "mcpgw-gateway" || ex.Audience != "tickets" || ex.Scope != "tickets:read" ||
			ex.SubjectTokenType != identity.TokenTypeAccess {
			t.Errorf("exchange %+v: want client mcpgw-gateway, audience tickets, scope tickets:read, an access token", ex)
		}
		if (ex.Error != "") != (ex.Subject == "carol") {
			t.Errorf("exchange for %s answered %q", ex.Subject, ex.Error)
		}
		bySubject[ex.Subject]++
	}
	if bySubject["alice"] != 1 || bySubject["bob"] != 1 || bySubject["carol"] < 1 {
		t.Errorf("exchanges by subject: %v; want alice 1, bob 1 (kept for later calls), carol at least 1", bySubject)
	}
}
