package oauth

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHTTPClientPrivateAddresses(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ts.Close()
	if resp, err := HTTPClient(false).Get(ts.URL); err != nil { // loopback
		t.Errorf("loopback refused: %v", err)
	} else {
		resp.Body.Close()
	}
	for _, u := range []string{"http://10.1.2.3:9/x", "http://192.168.0.1:9/x", "http://169.254.169.254/latest/meta-data"} {
		_, err := HTTPClient(false).Get(u)
		if err == nil || !strings.Contains(err.Error(), "allowPrivateNetwork") {
			t.Errorf("%s: %v, want refused as private", u, err)
		}
	}
}
