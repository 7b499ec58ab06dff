package transport

import (
	"bytes"
	"context"
	"crypto/subtle"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcpgw/mcpgw/gateway/identity"
	"github.com/mcpgw/mcpgw/gateway/statuspage"
	"github.com/mcpgw/mcpgw/internal/loopback"
	"github.com/mcpgw/mcpgw/registry"
)

// Headers and query parameters an HTTP client may use to describe its
// session (the stdio shim sends the same facts in its handshake line).
const (
	HeaderCwd  = "Mcp-Gateway-Cwd"  // the client's working directory (project overlays)
	HeaderMode = "Mcp-Gateway-Mode" // proxy, toolsearch or direct; also ?mode=
	// HeaderDirectTools is the session's MCP_DIRECT_TOOLS; also ?directTools=.
	HeaderDirectTools = "Mcp-Gateway-Direct-Tools"
	// HeaderClientPrefix says how the client names mcpgw's tools (see
	// SessionOptions.ClientPrefix); also ?clientPrefix=.
	HeaderClientPrefix = "Mcp-Gateway-Client-Prefix"
)

// HTTPOptions configure Handler.
type HTTPOptions struct {
	// Token, when set, must be presented as "Authorization: Bearer <token>"
	// on /mcp and the control endpoints, by the daemon's owner: the owner
	// check holds with a token too (see owner.go). Without a token, a
	// client whose owner cannot be found is refused.
	Token string
	// Gatherer serves /metrics; nil serves 404 there.
	Gatherer prometheus.Gatherer
	// SessionTimeout closes HTTP sessions idle this long; 0 = never.
	SessionTimeout time.Duration
	// Reload, when set, serves POST /-/reload: it reloads the configuration
	// and its error (nil on success or no change) is the answer.
	Reload func() error
}

// Control is what the daemon serves beside /mcp, under the same
// protection: its status report (GET /-/status) and the status page.
type Control struct {
	Status http.HandlerFunc
	Page   statuspage.Hub
	// Logins, when set, adds the endpoints of users' own logins to mux,
	// each through protect.
	Logins func(mux *http.ServeMux, protect func(http.HandlerFunc) http.Handler)
}

// Handler returns the daemon's HTTP surface: MCP Streamable HTTP at /mcp
// (DNS-rebinding and cross-origin protection on), the control endpoints
// and the status page, /metrics and /healthz.
func (t *Transports) Handler(opts *HTTPOptions, ctl Control) http.Handler {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	mcpHandler := t.sdkHandler(o)
	withSlot := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id := r.Header.Get("Mcp-Session-Id")
			switch {
			case id == "":
				r = r.WithContext(context.WithValue(r.Context(), sessionSlotKey{}, &sessionSlot{}))
			case r.Method == http.MethodDelete:
				// The SDK's close waits for the session's requests in
				// flight: end them first, as the client has left.
				t.hub.CancelHTTPSession(id)
			default:
				if ss, ok := t.hub.HTTPSession(id); ok {
					ss.SawSDK()
				}
			}
			next.ServeHTTP(w, r)
		})
	}
	fast := func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		return !t.o.NoFastPath && t.serveFast(w, r, body, o.SessionTimeout)
	}
	// The owner check, then the token: both must pass. In team mode, the
	// bearer token of a user instead (team.go).
	protect := func(h http.Handler) http.Handler {
		personal := h
		if o.Token != "" {
			personal = requireToken(o.Token, personal)
		}
		return t.teamOr(h, ownerOnly(o.Token != "", personal))
	}
	h := protect(t.shareSessions(mcpHandler, t.sessionOwner(readBodies(fast, byEra(t.sessionlessHandler(), withSlot(holdStreams(mcpHandler)))))))
	mux := http.NewServeMux()
	// One check of Host and one of Origin, before the fast path and the
	// go-sdk alike, so that the two cannot disagree (the go-sdk's own Host
	// check is off: it came after the fast path had answered).
	mux.Handle("/mcp", http.NewCrossOriginProtection().Handler(loopbackHost(h)))
	if t.o.Team != nil {
		mux.HandleFunc("GET "+MetadataPath, t.serveMetadata)
		mux.HandleFunc("GET "+MetadataPath+"/{resource...}", t.serveMetadata)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	// The control endpoints get the same protection as /mcp: owner and
	// token, no cross-origin browser requests, and no DNS rebinding.
	control := func(h http.HandlerFunc) http.Handler {
		return http.NewCrossOriginProtection().Handler(loopbackHost(protect(t.needStore(h))))
	}
	if ctl.Status != nil {
		mux.Handle("GET /-/status", control(ctl.Status))
	}
	if ctl.Page != nil {
		statuspage.Register(mux, ctl.Page, control)
	}
	if ctl.Logins != nil {
		ctl.Logins(mux, control)
	}
	if o.Reload != nil {
		mux.Handle("POST /-/reload", control(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			if err := o.Reload(); statuspage.IsForm(r) {
				http.Redirect(w, r, "/", http.StatusSeeOther) // the page shows the outcome
				return
			} else if err != nil {
				w.WriteHeader(http.StatusUnprocessableEntity)
				_, _ = w.Write([]byte(err.Error() + "\n"))
				return
			}
			_, _ = w.Write([]byte("reloaded\n"))
		}))
	}
	if o.Gatherer != nil {
		// Open to local scrapers of any user, but not to a DNS-rebinding page.
		// Uncompressed: a gzip answer needs a compressor, which promhttp
		// keeps only until the next collections, so a daemon scraped every
		// few seconds made one per scrape: 991 KB allocated per scrape
		// against 205 KB uncompressed, in a daemon whose heap is a few MB,
		// to save 6 KB on what is mostly a loopback connection.
		mux.Handle("GET /metrics", loopbackHost(promhttp.HandlerFor(o.Gatherer, promhttp.HandlerOpts{DisableCompression: true})))
	}
	return versionHeader(t.o.Version, mux)
}

// VersionHeader is on every answer of the daemon's (Mcpgw-Version:
// VERSION), so that a client can tell the daemon from another program on
// its port. A header of its own, not Server, which proxies replace.
const VersionHeader = "Mcpgw-Version"

// versionHeader marks every answer as mcpgw's (VersionHeader).
func versionHeader(version string, next http.Handler) http.Handler {
	value := []string{version} // shared by every answer, as jsonHeaders does
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()[VersionHeader] = value
		next.ServeHTTP(w, r)
	})
}

// sdkHandler is the go-sdk's Streamable HTTP handler, with a session (and
// its go-sdk Server) per MCP session.
func (t *Transports) sdkHandler(o HTTPOptions) http.Handler {
	// The go-sdk calls getServer on every request (to read the protocol
	// versions the server accepts) and again when a request opens a new
	// session. Requests of an existing session get versionsOnly; a new
	// session's two calls share one session through a slot in the
	// request's context, so a session is built once.
	versionsOnly := mcp.NewServer(&mcp.Implementation{Name: "mcpgw", Version: t.o.Version},
		&mcp.ServerOptions{SupportedProtocolVersions: t.o.Protocols})
	return mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if r.Header.Get("Mcp-Session-Id") != "" {
			return versionsOnly
		}
		slot, _ := r.Context().Value(sessionSlotKey{}).(*sessionSlot)
		if slot != nil && slot.server != nil {
			return slot.server
		}
		srv := t.hub.OpenHTTPSession(httpSessionOptions(r))
		if slot != nil {
			slot.server = srv
		}
		return srv
	}, &mcp.StreamableHTTPOptions{
		Logger:         t.log.With("component", "http"),
		SessionTimeout: o.SessionTimeout,
		// Answers as application/json rather than an SSE stream per call:
		// cheaper for both sides. Notifications to the client (tools/list_changed)
		// travel on the session's GET stream either way, and what is sent
		// before the client opens it waits for it (see EarlyEvents).
		JSONResponse: true,
		EventStore:   t.events,
		// Handler checks Host for every path to the session (loopbackHost).
		DisableLocalhostProtection: true,
	})
}

// sessionlessHandler is the go-sdk's Streamable HTTP handler for requests
// of protocol 2026-07-28 and later, which have no session: each is
// answered by the server of the conversation its headers describe
// (Hub.Conversation). The go-sdk serves that protocol only statelessly.
func (t *Transports) sessionlessHandler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		return t.hub.Conversation(httpSessionOptions(r))
	}, &mcp.StreamableHTTPOptions{
		Logger:    t.log.With("component", "http"),
		Stateless: true,
		// An answer is an event stream: with no session there is no
		// other way for what a request causes (its progress, its log
		// messages) to reach the client before the result.
		// The request is the whole exchange: a client that hangs up
		// has given up on the answer.
		PropagateRequestCancellation: true,
		DisableLocalhostProtection:   true, // see sdkHandler
	})
}

// FirstSessionless is the first protocol version without sessions
// (SEP-2575, SEP-2567): a request of it or later names its version on
// every request, in the MCP-Protocol-Version header and in its _meta.
const FirstSessionless = "2026-07-28"

// metaProtocolVersion is the _meta member that says a request is of the
// sessionless protocol.
const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// byEra sends a request of the sessionless protocol to sessionless, and
// the rest to sessions. The header decides; a POST without a session that
// names its version only in _meta goes to sessionless too, whose answer
// (the header is missing) is the one the protocol asks for.
func byEra(sessionless, sessions http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isSessionless(r) {
			sessionless.ServeHTTP(w, r)
			return
		}
		sessions.ServeHTTP(w, r)
	})
}

// isSessionless reports whether r is a request of the sessionless
// protocol. A POST's body, read by readBodies, is a bytes.Reader.
func isSessionless(r *http.Request) bool {
	if pv := r.Header.Get("Mcp-Protocol-Version"); pv != "" {
		return pv >= FirstSessionless
	}
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" || r.Body == nil {
		return false
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false
	}
	v := member(member(member(body, "params"), "_meta"), metaProtocolVersion)
	return len(v) > 0 && string(v) != "null"
}

// httpSessionOptions are the session options an HTTP request asks for,
// in its query or its headers.
func httpSessionOptions(r *http.Request) SessionOptions {
	var query url.Values // parsed once, if there is one
	if r.URL.RawQuery != "" {
		query = r.URL.Query()
	}
	get := func(param, header string) string {
		if v := query.Get(param); v != "" {
			return v
		}
		return r.Header.Get(header)
	}
	return SessionOptions{
		Cwd:          r.Header.Get(HeaderCwd),
		Mode:         registry.Mode(get("mode", HeaderMode)),
		DirectTools:  get("directTools", HeaderDirectTools),
		ClientPrefix: get("clientPrefix", HeaderClientPrefix),
		User:         identity.FromContext(r.Context()),
	}
}

// readBodies reads a POST's body, answers one that is not UTF-8 with a
// JSON-RPC parse error (JSON is UTF-8, RFC 8259, and Go's decoder would
// quietly turn invalid bytes into U+FFFD and pass the damage on upstream),
// and offers the rest to fast (a fast call) before next.
func readBodies(fast func(http.ResponseWriter, *http.Request, []byte) bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		// A body is one JSON-RPC message: a client that has not sent it
		// within bodyTimeout is stalled, and gives its connection back.
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(bodyTimeout))
		body, err := readBody(w, r)
		_ = rc.SetReadDeadline(time.Time{})
		if err != nil {
			http.Error(w, "reading the request: "+err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		if !utf8.Valid(body) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the body is not valid UTF-8"}}` + "\n"))
			return
		}
		if fast(w, r, body) {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// readBody reads a request's body whole, at most maxRequestBody bytes:
// into a buffer of the length the client announced, when it did (as
// clients do for a JSON-RPC message), else growing as io.ReadAll does.
// Either way a body is one allocation the size of the message, not a
// 512-byte one for a call of 150. net/http sees the body's end with its
// last byte, and watches from then on for the client going away, which
// cancels the request's context and so a fast call (see gateway's
// TestFastCallEndsWhenTheClientGoesAway).
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= maxRequestBody {
		body := make([]byte, n)
		_, err := io.ReadFull(r.Body, body)
		return body, err
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
}

// maxRequestBody bounds one request's body, and bodyTimeout the time to
// send it.
const (
	maxRequestBody = 64 << 20
	bodyTimeout    = 10 * time.Second
)

type sessionSlotKey struct{}

// sessionSlot carries the session built for a request that opens one.
type sessionSlot struct{ server *mcp.Server }

// loopbackHost refuses requests that reached a loopback address under a
// Host name that is not a loopback one: a DNS-rebinding page.
func loopbackHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			if ta, ok := la.(*net.TCPAddr); ok && ta.IP.IsLoopback() && !isLoopbackHost(r.Host) {
				http.Error(w, "forbidden: non-local Host header", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func isLoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return loopback.IsHost(host)
}

func requireToken(token string, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The scheme is case-insensitive (RFC 9110 §11.1): "bearer x" is
		// as good as "Bearer x".
		scheme, cred, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		got := []byte(strings.TrimSpace(cred))
		ok := strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare(got, want) == 1
		if c, err := r.Cookie(tokenCookie); !ok && err == nil {
			// A browser on the status page, which asked for the token once.
			ok = subtle.ConstantTimeCompare([]byte(c.Value), want) == 1
		}
		if !ok {
			if r.URL.Path == "/" {
				askToken(w, r, token)
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcpgw"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tokenCookie keeps the daemon's token in a browser that opened the status
// page: same-site only, not readable by scripts.
const tokenCookie = "mcpgw_token"

// askToken answers the status page without the token with a form asking
// for it; posted, the right token is kept in the cookie and the page shown.
func askToken(w http.ResponseWriter, r *http.Request, token string) {
	if t := r.PostFormValue("token"); r.Method == http.MethodPost && t != "" && subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprint(w, `<!doctype html><title>mcpgw</title><form method="post" action="/"><p>This mcpgw daemon needs its token (its --token-file, or $MCPGW_TOKEN):</p><input type="password" name="token" autofocus> <button>Open</button></form>`)
}
