package transport

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestSocketHTTP: once SocketHTTP is served, a connection to the shims'
// socket that speaks HTTP reaches the daemon's handler as the socket's
// owner (no token: the owner check passes), with mcpgw's version header; a
// shim on the same socket still gets its session.
func TestSocketHTTP(t *testing.T) {
	t.Parallel()
	sock := t.TempDir() + "/s"
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	received := make(chan string, 4)
	hub := &fakeHub{}
	hub.serve = echo(nil, received)
	tr := New(hub, Options{Version: "test"})
	status := func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "report") }
	srv := &http.Server{Handler: tr.Handler(nil, Control{Status: status}), ConnContext: ConnContext}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(tr.SocketHTTP()) }()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tr.ServeSocket(ctx, ln) }()
	defer func() {
		cancel()
		<-done
		srv.Close()
		<-served
	}()

	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	resp, err := client.Get("http://localhost/-/status")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "report" || resp.Header.Get(VersionHeader) != "test" {
		t.Errorf("GET /-/status on the socket: %s %q, %s %q", resp.Status, body, VersionHeader, resp.Header.Get(VersionHeader))
	}

	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Write([]byte(`{"mcpgw":1}` + "\n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
	r := bufio.NewReader(c)
	welcome, _ := r.ReadString('\n')
	answer, _ := r.ReadString('\n')
	if welcome != `{"ok":true,"version":"test"}`+"\n" || !strings.Contains(answer, `"echo":"ping"`) {
		t.Errorf("a shim on the same socket: %q %q", welcome, answer)
	}
}
