package transport

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/mcpgw/mcpgw/deploy"
)

// TestOwnerAndToken: with a token, the owner check still holds (the token
// is a second lock, not another door); a client whose owner is unknown
// (not on loopback, or no lookup on this system) gets through with the
// token only, and without a token not at all.
func TestOwnerAndToken(t *testing.T) {
	me := os.Getuid()
	tr := New(&fakeHub{}, Options{})
	status := func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("report")) }
	for _, tc := range []struct {
		name   string
		token  string // the daemon's
		peer   peer
		bearer string // the client's
		want   int
		noPeer bool // no listener found the owner (as in a handler's test)
	}{
		{"the owner with the token", "s3cret", peer{uid: me}, "s3cret", 200, false},
		{"the owner without it", "s3cret", peer{uid: me}, "", 401, false},
		{"the owner with another", "s3cret", peer{uid: me}, "guess", 401, false},
		{"another user with the token", "s3cret", peer{uid: me + 1000}, "s3cret", 403, false},
		{"an unknown owner with the token", "s3cret", peer{uid: -1, err: deploy.ErrPeerUnknown}, "s3cret", 200, false},
		{"an unknown owner without it", "s3cret", peer{uid: -1, err: deploy.ErrPeerUnknown}, "", 401, false},
		{"no token: the owner", "", peer{uid: me}, "", 200, false},
		{"no token: another user", "", peer{uid: me + 1000}, "", 403, false},
		{"no token: an unknown owner", "", peer{uid: -1, err: deploy.ErrPeerUnknown}, "", 403, false},
		{"no listener, with the token", "s3cret", peer{}, "s3cret", 200, true},
		{"no listener, without a token", "", peer{}, "", 403, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tr.Handler(&HTTPOptions{Token: tc.token}, Control{Status: status})
			for _, path := range []string{"/-/status", "/mcp"} {
				req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7332"+path, nil)
				if !tc.noPeer {
					req = req.WithContext(context.WithValue(req.Context(), peerKey{}, tc.peer))
				}
				if tc.bearer != "" {
					req.Header.Set("Authorization", "Bearer "+tc.bearer)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				got := rec.Code
				if path == "/mcp" && tc.want == 200 {
					// Past both locks, the go-sdk answers a GET without a
					// session as it does.
					if got == 401 || got == 403 {
						t.Errorf("%s: %d, want through to the MCP handler", path, got)
					}
					continue
				}
				if got != tc.want {
					t.Errorf("%s: %d, want %d (%s)", path, got, tc.want, rec.Body)
				}
			}
		})
	}
}
