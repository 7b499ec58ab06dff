package fakeupstream

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ConformanceHandler serves s over Streamable HTTP in both protocol eras,
// as the suite's server scenarios expect of a server at /mcp: a request
// of protocol 2026-07-28 or later by the go-sdk's stateless handler
// (SEP-2575: no session, each request describes its client in _meta,
// subscriptions/listen for notifications), any other in a session of the
// go-sdk's stateful handler (initialize, a GET stream, requests of the
// client while a call runs). Both serve the same server, so a change of
// its lists reaches listeners of either era.
func ConformanceHandler(s *mcp.Server) http.Handler {
	get := func(*http.Request) *mcp.Server { return s }
	sessionless := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		PropagateRequestCancellation: true,
	})
	// A session's streams can be resumed after a break (SEP-1699), as
	// server-sse-polling checks.
	sessions := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isSessionless(r) {
			sessionless.ServeHTTP(w, r)
			return
		}
		sessions.ServeHTTP(w, r)
	})
}

// isSessionless reports whether r is of protocol 2026-07-28 or later:
// its MCP-Protocol-Version header says so or, without the header, a POST
// outside a session names its version in _meta (the stateless handler
// then gives the answer the protocol asks for a request missing the
// header).
func isSessionless(r *http.Request) bool {
	const first = "2026-07-28"
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
		return v >= first
	}
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" || r.Body == nil {
		return false
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false
	}
	var msg struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return false
	}
	v, ok := msg.Params.Meta["io.modelcontextprotocol/protocolVersion"]
	return ok && string(v) != "null"
}

// ServeConformance listens on addr (e.g. "127.0.0.1:0") and serves
// ConformanceServer at /mcp (ConformanceHandler) until ctx is done. If
// ready is non-nil it is called with the MCP URL once the listener is
// open.
func ServeConformance(ctx context.Context, addr string, ready func(url string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", ConformanceHandler(ConformanceServer()))
	hs := &http.Server{Handler: mux}
	if ready != nil {
		ready("http://" + ln.Addr().String() + "/mcp")
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
		_ = hs.Close()
		<-errc
		return nil
	case err := <-errc:
		return err
	}
}
