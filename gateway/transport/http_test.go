package transport

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The bearer scheme is case-insensitive; the token is not.
func TestTokenSchemeCaseInsensitive(t *testing.T) {
	h := requireToken("s3cret", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for auth, want := range map[string]int{
		"Bearer s3cret": 200, "bearer s3cret": 200, "BEARER  s3cret": 200,
		"Bearer S3CRET": 401, "Basic s3cret": 401, "": 401, "Bearer": 401,
	} {
		req := httptest.NewRequest("POST", "/mcp", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Authorization %q: %d, want %d", auth, rec.Code, want)
		}
	}
}

// TestTokenCookie: with a token, the status page asks for it once; the
// posted token is kept in a same-site, script-proof cookie that then lets
// the page and its actions through; a wrong one is refused.
func TestTokenCookie(t *testing.T) {
	h := requireToken("s3cret", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("page")) }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), `name="token"`) {
		t.Fatalf("page without token: %d %q", rec.Code, rec.Body.String())
	}
	post := func(token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("token="+token))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	if rec := post("wrong"); rec.Code != http.StatusUnauthorized || len(rec.Result().Cookies()) != 0 {
		t.Errorf("wrong token: %d, cookies %v", rec.Code, rec.Result().Cookies())
	}
	rec = post("s3cret")
	cookies := rec.Result().Cookies()
	if rec.Code != http.StatusSeeOther || len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("right token: %d, cookies %+v", rec.Code, cookies)
	}
	req := httptest.NewRequest(http.MethodPost, "/-/connect", nil)
	req.AddCookie(cookies[0])
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Body.String() != "page" {
		t.Errorf("with the cookie: %d %q", rec.Code, rec.Body.String())
	}
}
