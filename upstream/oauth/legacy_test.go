package oauth

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestLegacyIssuer: the 2025-03-26 metadata document at the MCP server's
// root is read with the origin as its issuer when it names one on the same
// origin; one naming another origin, or served elsewhere, is left as it is
// (for the SDK's check to refuse).
func TestLegacyIssuer(t *testing.T) {
	var issuer string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": issuer, "token_endpoint": "x"})
	}))
	defer srv.Close()
	hc := withLegacyIssuer(srv.Client(), srv.URL+"/mcp")
	get := func(path string) string {
		resp, err := hc.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		s, _ := m["issuer"].(string)
		return s
	}
	for _, tc := range []struct{ issuer, path, want string }{
		{srv.URL + "/oauth", "/.well-known/oauth-authorization-server", srv.URL},
		{"https://elsewhere.example/oauth", "/.well-known/oauth-authorization-server", "https://elsewhere.example/oauth"},
		{srv.URL + "/oauth", "/.well-known/oauth-authorization-server/oauth", srv.URL + "/oauth"},
		{srv.URL, "/.well-known/oauth-authorization-server", srv.URL},
	} {
		issuer = tc.issuer
		if got := get(tc.path); got != tc.want {
			t.Errorf("issuer %q at %s read as %q, want %q", tc.issuer, tc.path, got, tc.want)
		}
	}
}

// TestNoteWanted: scopes a server asked for beyond the login's are kept
// once each, and only those not granted.
func TestNoteWanted(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	if err := s.Save(&Credentials{ServerURL: "https://mcp.example/mcp", ClientID: "c", TokenURL: "t", Scopes: []string{"mcp:basic"}}); err != nil {
		t.Fatal(err)
	}
	added, err := s.NoteWanted("https://mcp.example/mcp", []string{"mcp:basic", "mcp:write"})
	if err != nil || !added {
		t.Fatalf("NoteWanted: %v %v", added, err)
	}
	if added, _ = s.NoteWanted("https://mcp.example/mcp", []string{"mcp:write"}); added {
		t.Error("the same scope noted twice")
	}
	c, _ := s.Load("https://mcp.example/mcp")
	if len(c.Wanted) != 1 || c.Wanted[0] != "mcp:write" {
		t.Errorf("wanted = %v", c.Wanted)
	}
	if _, err := s.NoteWanted("https://other.example/mcp", []string{"x"}); err == nil {
		t.Error("noting scopes of a server never logged in to: no error")
	}
}
