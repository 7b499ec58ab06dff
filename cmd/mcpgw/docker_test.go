package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestDockerHealthcheck(t *testing.T) {
	healthy := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		if !healthy {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	}))
	defer srv.Close()
	ctx := context.Background()

	var out bytes.Buffer
	if err := run(ctx, []string{"healthcheck", "--url", srv.URL + "/"}, nil, &out, &out); err != nil {
		t.Fatalf("healthcheck of a healthy daemon: %v", err)
	}
	if got, want := out.String(), srv.URL+"/healthz: ok\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}

	healthy = false
	err := run(ctx, []string{"healthcheck", "--url", srv.URL}, nil, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "shutting down") {
		t.Errorf("healthcheck of an unhealthy daemon = %v, want the 503 and its body", err)
	}

	srv.Close()
	if err := run(ctx, []string{"healthcheck", "--url", srv.URL, "--timeout", "2s"}, nil, &out, &out); err == nil {
		t.Error("healthcheck with nothing listening = nil, want an error")
	}
}

// TestDockerHealthcheckDaemon runs the real daemon: the HEALTHCHECK of the
// image must pass against it, MCPGW_URL being how a container would point
// the check elsewhere.
func TestDockerHealthcheckDaemon(t *testing.T) {
	dir := t.TempDir()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	var log syncBuffer
	var serveErr error
	exited := make(chan struct{})
	go func() {
		serveErr = run(ctx, []string{"serve", "--listen", addr, "--socket", "",
			"--config", filepath.Join(dir, "mcp.json"), "--cache", filepath.Join(dir, "cache.json"), "--no-bootstrap"}, nil, &log, &log)
		close(exited)
	}()
	defer func() { cancel(); <-exited }()
	t.Setenv("MCPGW_URL", "http://"+addr)
	var err error
	for range 200 {
		if err = run(ctx, []string{"healthcheck", "--timeout", "1s"}, nil, io.Discard, io.Discard); err == nil {
			return
		}
		select {
		case <-exited:
			t.Fatalf("serve exited: %v\n%s", serveErr, log.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("healthcheck against the daemon at %s: %v\n%s", addr, err, log.String())
}
