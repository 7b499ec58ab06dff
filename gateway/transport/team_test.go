package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgw/mcpgw/gateway/identity"
	"github.com/mcpgw/mcpgw/internal/shim/wire"
)

// fakeTeam is an Authenticator whose good tokens are "token-USER"; the
// token "down" finds the issuer unreachable.
type fakeTeam struct {
	mu     sync.Mutex
	issuer string
}

func (f *fakeTeam) Issuer() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.issuer
}

func (f *fakeTeam) set(issuer string) {
	f.mu.Lock()
	f.issuer = issuer
	f.mu.Unlock()
}

func (f *fakeTeam) Authenticate(_ context.Context, token string) (*identity.User, error) {
	if token == "down" {
		return nil, fmt.Errorf("%w: no answer", identity.ErrIssuer)
	}
	if user, ok := strings.CutPrefix(token, "token-"); ok {
		return &identity.User{Name: user}, nil
	}
	return nil, fmt.Errorf("%w: expired", identity.ErrToken)
}

const metadataURL = "http://127.0.0.1:7332/.well-known/oauth-protected-resource"

// In team mode every protected route wants a user's bearer token, from
// whatever connection (the owner check is the token's now), and a refusal
// points at the protected resource's metadata.
func TestTeamProtection(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		auth   string
		uid    int
		status int
		header string // WWW-Authenticate
		body   string
	}{
		{name: "alice from anywhere", auth: "Bearer token-alice", uid: -1},
		{name: "alice as another local user", auth: "bearer token-alice", uid: os.Getuid() + 1},
		{name: "no token", uid: os.Getuid(), status: 401, header: `Bearer resource_metadata="` + metadataURL + `"`,
			body: "this mcpgw daemon is in team mode: send Authorization: Bearer <token> from https://id.example.com"},
		{name: "the daemon's own token", auth: "Bearer s3cret", uid: os.Getuid(), status: 401,
			header: `Bearer resource_metadata="` + metadataURL + `", error="invalid_token"`, body: "bearer token refused: invalid token: expired"},
		{name: "another scheme", auth: "Basic token-alice", uid: os.Getuid(), status: 401, header: `Bearer resource_metadata="` + metadataURL + `"`},
		{name: "issuer down", auth: "Bearer down", uid: -1, status: 503, body: "the token cannot be checked now"},
	} {
		for _, rt := range protectedRoutes {
			t.Run(c.name+"/"+rt.name, func(t *testing.T) {
				t.Parallel()
				s := newSurfaceWith("s3cret", Options{Version: "test", Team: &fakeTeam{issuer: "https://id.example.com"}}, "alice")
				r := rt.request(daemonAddr)
				if c.auth != "" {
					r.Header.Set("Authorization", c.auth)
				}
				w := httptest.NewRecorder()
				s.h.ServeHTTP(w, withPeer(r, c.uid))
				body := w.Body.String()
				if c.status == 0 {
					if w.Code != 200 || !strings.Contains(body, rt.want) || s.reached() != 1 {
						t.Errorf("%d %q, reached %d; want 200 with %q", w.Code, body, s.reached(), rt.want)
					}
					return
				}
				if w.Code != c.status || !strings.Contains(body, c.body) || s.reached() != 0 {
					t.Errorf("%d %q, reached %d; want %d with %q", w.Code, body, s.reached(), c.status, c.body)
				}
				if got := w.Header().Get("WWW-Authenticate"); got != c.header {
					t.Errorf("WWW-Authenticate %q, want %q", got, c.header)
				}
			})
		}
	}
}

// The user travels into the session a request opens; another user's
// requests for that session find none.
func TestTeamSessions(t *testing.T) {
	t.Parallel()
	s := newSurfaceWith("", Options{Version: "test", Team: &fakeTeam{issuer: "https://id.example.com"}}, "alice")
	serve := func(rt route, token string) *httptest.ResponseRecorder {
		r := rt.request(daemonAddr)
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, withPeer(r, -1))
		return w
	}
	if w := serve(route{method: "POST", target: "/mcp", body: initializeBody}, "token-alice"); w.Code != 200 {
		t.Fatalf("alice's initialize: %d %s", w.Code, w.Body)
	}
	opened, _, _ := s.hub.record()
	if len(opened) != 1 || !reflect.DeepEqual(opened[0].User, &identity.User{Name: "alice"}) {
		t.Fatalf("opened sessions %+v, want one of alice's", opened)
	}
	call := route{method: "POST", target: "/mcp", body: fastCallBody, session: "s1"}
	for _, rt := range []route{call, {method: "GET", target: "/mcp", session: "s1"}, {method: "DELETE", target: "/mcp", session: "s1"}} {
		if w := serve(rt, "token-bob"); w.Code != 404 || w.Body.String() != "session not found\n" {
			t.Errorf("bob's %s of alice's session: %d %q, want 404", rt.method, w.Code, w.Body)
		}
	}
	if _, _, canceled := s.hub.record(); len(canceled) != 0 || s.reached() != 1 {
		t.Errorf("bob's requests reached alice's session: canceled %v, reached %d", canceled, s.reached())
	}
	if w := serve(call, "token-alice"); w.Code != 200 || s.reached() != 2 {
		t.Errorf("alice's call: %d %q, reached %d", w.Code, w.Body, s.reached())
	}
}

// The protected resource's metadata (RFC 9728) is open in team mode, at
// the well-known path and under it with the resource's path; /healthz and
// /metrics need no token. Out of team mode there is no metadata, and the
// daemon's own protection is back.
func TestTeamOpenRoutes(t *testing.T) {
	t.Parallel()
	team := &fakeTeam{issuer: "https://id.example.com"}
	s := newSurfaceWith("", Options{Version: "test", Team: team}, "")
	get := func(target string, uid int, header ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", target, nil)
		r.Host = "127.0.0.1:7332"
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, withPeer(r, uid))
		return w
	}
	for _, target := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		w := get(target, -1)
		var meta map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &meta); w.Code != 200 || err != nil {
			t.Fatalf("%s: %d %q", target, w.Code, w.Body)
		}
		want := map[string]any{"resource": "http://127.0.0.1:7332/mcp", "authorization_servers": []any{"https://id.example.com"},
			"bearer_methods_supported": []any{"header"}, "resource_name": "mcpgw"}
		if !reflect.DeepEqual(meta, want) {
			t.Errorf("%s: %v, want %v", target, meta, want)
		}
	}
	w := get(MetadataPath, -1, "X-Forwarded-Proto", "https")
	if !strings.Contains(w.Body.String(), `"resource":"https://127.0.0.1:7332/mcp"`) {
		t.Errorf("behind a proxy that ends TLS: %s", w.Body)
	}
	for _, target := range []string{"/healthz", "/metrics"} {
		if w := get(target, -1); w.Code != 200 {
			t.Errorf("%s in team mode: %d %q", target, w.Code, w.Body)
		}
	}
	team.set("") // a reload took the team block away
	if w := get(MetadataPath, -1); w.Code != 404 {
		t.Errorf("metadata out of team mode: %d", w.Code)
	}
	if w := get("/-/status", -1, "Authorization", "Bearer token-alice"); w.Code != 403 || s.reached() != 0 {
		t.Errorf("out of team mode, an unknown peer with a user's token: %d %q, want the owner check's 403", w.Code, w.Body)
	}
	if w := get("/-/status", os.Getuid()); w.Code != 200 {
		t.Errorf("out of team mode, the owner: %d %q", w.Code, w.Body)
	}
}

// A shim has no bearer token: a daemon in team mode refuses it with a
// welcome that says why, and serves it no session.
func TestTeamRefusesShims(t *testing.T) {
	t.Parallel()
	hub := &fakeHub{}
	tr := New(hub, Options{Version: "test", Team: &fakeTeam{issuer: "https://id.example.com"}})
	client, daemon := socketPair(t)
	done := make(chan error, 1)
	go func() { done <- tr.ServeShim(context.Background(), daemon) }()
	hello, _ := json.Marshal(wire.Hello{Protocol: 1, Cwd: "/"})
	if _, err := client.Write(append(hello, '\n')); err != nil {
		t.Fatal(err)
	}
	var wel wire.Welcome
	if err := json.NewDecoder(client).Decode(&wel); err != nil {
		t.Fatal(err)
	}
	if wel.OK || wel.Error != refuseShimInTeamMode {
		t.Errorf("welcome %+v, want the team-mode refusal", wel)
	}
	if err := <-done; err == nil {
		t.Error("ServeShim served a shim in team mode")
	}
	if _, served, _ := hub.record(); len(served) != 0 {
		t.Errorf("sessions served: %+v", served)
	}
}
