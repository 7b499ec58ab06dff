package upstream

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// Secret values follow pi-mcp-adapter's convention: "!!x" is the literal
// "!x", "!cmd" is cmd's output, run at connect time.
func TestSecretValuesOnTheWire(t *testing.T) {
	t.Parallel()
	ts, rec := httpServer(t, fakeupstream.Handler(nil))
	for _, tc := range []struct {
		name, bearer, header string
		wantAuth, wantHeader string
	}{
		{"literal", "!!abc", "!!x", "Bearer !abc", "!x"},
		{"command", "!printf tok-1", "!echo  spaced   words", "Bearer tok-1", "spaced words"},
		{"shell", "!printf 'a b' | tr ab xy", "plain", "Bearer x y", "plain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec.reset()
			srv := &registry.Server{Name: tc.name, URL: ts.URL + "/mcp", BearerToken: tc.bearer,
				Headers: map[string]string{"X-Custom": tc.header}, Hash: tc.name, SecretCommands: true}
			u := newPool(t, nil).Upstream(srv)
			call(t, u, "echo", map[string]any{"message": "x"})
			reqs := rec.requests()
			if len(reqs) == 0 {
				t.Fatal("no requests")
			}
			for _, r := range reqs {
				if r.Auth != tc.wantAuth || r.Custom != tc.wantHeader {
					t.Errorf("%s %s: Authorization %q, X-Custom %q; want %q, %q", r.Method, r.Path, r.Auth, r.Custom, tc.wantAuth, tc.wantHeader)
				}
			}
		})
	}
}

func TestSecretCommandInEnv(t *testing.T) {
	t.Parallel()
	srv := fakeupstream.Server("envsecret", map[string]string{"SECRET_A": "!echo from-command", "SECRET_B": "!!bang"})
	srv.SecretCommands = true
	u := newPool(t, nil).Upstream(srv)
	if got := call(t, u, "env", map[string]any{"name": "SECRET_A"}); got != "from-command" {
		t.Errorf("SECRET_A = %q, want from-command", got)
	}
	if got := call(t, u, "env", map[string]any{"name": "SECRET_B"}); got != "!bang" {
		t.Errorf("SECRET_B = %q, want !bang", got)
	}
}

// A secret command runs without mcpgw's own variables, as an upstream
// does: the daemon's token is not the command's to print.
func TestSecretCommandWithoutOwnVars(t *testing.T) {
	t.Setenv("MCPGW_TOKEN", "s3cret-token")
	srv := fakeupstream.Server("ownvars", map[string]string{"PEEK": "!echo token=${MCPGW_TOKEN:-none}"})
	srv.SecretCommands = true
	u := newPool(t, nil).Upstream(srv)
	if got := call(t, u, "env", map[string]any{"name": "PEEK"}); got != "token=none" {
		t.Errorf("the secret command saw %q, want token=none", got)
	}
}

// A "!cmd" from a definition that may not run commands (an import other
// than Pi's, an untrusted project) is refused, and nothing runs.
func TestSecretCommandRefused(t *testing.T) {
	t.Parallel()
	marker := t.TempDir() + "/ran"
	srv := fakeupstream.Server("refused", map[string]string{"TOKEN": "!touch " + marker})
	srv.Source = "/home/u/.cursor/mcp.json"
	u := newPool(t, nil).Upstream(srv)
	_, err := u.Call(context.Background(), "echo", map[string]any{"message": "x"}, nil)
	if !errors.Is(err, ErrSecretCommandRefused) || !strings.Contains(err.Error(), "env.TOKEN") || !strings.Contains(err.Error(), ".cursor/mcp.json") {
		t.Fatalf("err = %v, want ErrSecretCommandRefused naming env.TOKEN and the file", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the refused command ran")
	}
}

// A failing command's stderr is in the connect error; its output never is.
func TestSecretCommandFailure(t *testing.T) {
	t.Parallel()
	srv := fakeupstream.Server("failing", map[string]string{"TOKEN": "!echo secret-out; echo vault locked >&2; exit 3"})
	srv.SecretCommands = true
	_, err := newPool(t, nil).Upstream(srv).Call(context.Background(), "echo", map[string]any{"message": "x"}, nil)
	if err == nil || !strings.Contains(err.Error(), "vault locked") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("err = %v, want the command's stderr and status", err)
	}
	if strings.Contains(err.Error(), "secret-out") {
		t.Errorf("err = %v shows the command's output", err)
	}
}

// bearerTokenEnv is read at every connect, through Options.Getenv.
func TestBearerTokenEnvReadAtConnect(t *testing.T) {
	t.Parallel()
	ts, rec := httpServer(t, fakeupstream.Handler(nil))
	var token atomic.Value
	token.Store("one")
	p := newPool(t, &Options{Getenv: func(k string) (string, bool) {
		if k == "ROTATED" {
			return token.Load().(string), true
		}
		return "", false
	}})
	u := p.Upstream(&registry.Server{Name: "rot", URL: ts.URL + "/mcp", BearerTokenEnv: "ROTATED", Hash: "rot"})
	call(t, u, "echo", map[string]any{"message": "x"})
	token.Store("two")
	u.dropSession(u.currentSession(), "test")
	rec.reset()
	call(t, u, "echo", map[string]any{"message": "x"})
	for _, r := range rec.requests() {
		if r.Method != "DELETE" && r.Auth != "Bearer two" {
			t.Errorf("%s %s after rotation: %q, want Bearer two", r.Method, r.Path, r.Auth)
		}
	}
}

// bearerTokenEnv never reads mcpgw's own variables, whatever the
// definition says (the registry warns about it too).
func TestBearerTokenEnvNeverOwnVars(t *testing.T) {
	t.Parallel()
	ts, rec := httpServer(t, fakeupstream.Handler(nil))
	p := newPool(t, &Options{Getenv: func(k string) (string, bool) { return "s3cret-token", true }})
	u := p.Upstream(&registry.Server{Name: "own", URL: ts.URL + "/mcp", BearerTokenEnv: "MCPGW_TOKEN", Hash: "own"})
	call(t, u, "echo", map[string]any{"message": "x"})
	reqs := rec.requests()
	if len(reqs) == 0 {
		t.Fatal("no requests")
	}
	for _, r := range reqs {
		if r.Auth != "" {
			t.Errorf("%s %s: Authorization %q, want none", r.Method, r.Path, r.Auth)
		}
	}
}

// A connect error names the server's URL with its secrets masked: such
// errors reach logs, status and the model.
func TestConnectErrorMasksURLSecrets(t *testing.T) {
	t.Parallel()
	srv := &registry.Server{Name: "leaky", URL: "http://127.0.0.1:1/mcp?api_key=sekrit123&region=eu", Hash: "leaky"}
	u := newPool(t, nil).Upstream(srv)
	_, err := u.Call(context.Background(), "echo", nil, nil)
	if err == nil {
		t.Fatal("connecting to a closed port succeeded")
	}
	if msg := err.Error(); strings.Contains(msg, "sekrit123") || !strings.Contains(msg, "api_key=%2A%2A%2A") && !strings.Contains(msg, "api_key=***") {
		t.Errorf("connect error %q shows the secret or does not say it was masked", msg)
	}
	if st := u.Status(); st.LastError == "" || strings.Contains(st.LastError, "sekrit123") {
		t.Errorf("status shows the secret: %q", st.LastError)
	}
}
