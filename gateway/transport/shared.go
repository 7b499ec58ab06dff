package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/identity"
)

// Replicas (team mode with team.store): a 2025-era HTTP session is kept in
// the shared store from its initialize on, so that any replica can answer
// its requests. The go-sdk's Streamable HTTP handler knows only the
// sessions it made, and answers 404 for any other ID; so a request for a
// session this replica does not have, but the store does (and it is the
// same user's), first makes the session here: the hub builds it with the
// state kept (mode, working directory, activations, grants) under the ID
// the client holds, and the client's initialize and initialized are
// replayed to the go-sdk, which then knows the session as its own. A
// request for a session this replica has brings its copy up to date with
// the store (what another replica activated or granted), or ends it, when
// the store says the session has ended (a DELETE on another replica).
//
// Requests of protocol 2026-07-28 have no session and need none of this:
// each is answered by the conversation its own headers describe.

// SharedSessions is the hub's side of HTTP sessions kept in team.store.
// Its methods are called for requests of a user, concurrently; an error
// is the store's (it cannot be reached), and says so.
type SharedSessions interface {
	// Opened keeps the session id the go-sdk has just made for opts.User,
	// whose client described it with opts and initialized it with
	// initialize (the request's params), before its client is answered.
	// An error leaves the session this replica's alone.
	Opened(ctx context.Context, id string, opts SessionOptions, initialize json.RawMessage) error
	// Refresh brings this replica's copy of user's session id up to
	// date with the store; gone: the session has ended elsewhere.
	Refresh(ctx context.Context, user, id string) (gone bool, err error)
	// Resume makes user's session id (opts.User) here from what the
	// store keeps: it returns the session's go-sdk server, whose session
	// ID is id, and the initialize params to replay; nil for a session
	// the store does not keep for that user.
	Resume(ctx context.Context, id string, opts SessionOptions) (*mcp.Server, json.RawMessage, error)
	// End forgets user's session id: its client has ended it. existed
	// says whether the store kept it.
	End(ctx context.Context, user, id string) (existed bool, err error)
	// Closed says that this replica's copy of session id has ended.
	Closed(id string)
	// Ping says whether the store can be reached.
	Ping(ctx context.Context) error
}

// heldSession is a session the go-sdk on this replica has: who it is
// for, and whether the go-sdk has been told it is initialized.
type heldSession struct {
	user        string
	initialized bool
}

// sharing is the transport's side of shared sessions.
type sharing struct {
	resumes singleflight.Group // by user and ID: one resume at a time

	mu   sync.Mutex
	held map[string]*heldSession // by session ID
}

// hold notes that the go-sdk here has session id, for user.
func (s *sharing) hold(id, user string, initialized bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held == nil {
		s.held = make(map[string]*heldSession)
	}
	s.held[id] = &heldSession{user: user, initialized: initialized}
}

// holding returns what is known of session id here.
func (s *sharing) holding(id string) (h heldSession, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.held[id]; p != nil {
		return *p, true
	}
	return heldSession{}, false
}

// initialized notes that the go-sdk has been told session id is
// initialized; it reports whether it had been already.
func (s *sharing) initialized(id string) (already bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.held[id]; p != nil {
		already, p.initialized = p.initialized, true
	}
	return already
}

// closed forgets session id: the go-sdk here has ended it.
func (s *sharing) closed(id string) {
	s.mu.Lock()
	delete(s.held, id)
	s.mu.Unlock()
}

// errNotKept: the store keeps no such session for the user.
var errNotKept = errors.New("not kept")

// Methods the transport reads from a body to decide on a session.
const (
	methodInitialize  = "initialize"
	methodInitialized = "notifications/initialized"
)

// shareSessions serves next after making sure that a request for a
// 2025-era session finds it on this replica when the store keeps it
// (see above); sdk is the go-sdk's session handler, which replays go to.
// Without a store, or outside team mode, it is next.
func (t *Transports) shareSessions(sdk, next http.Handler) http.Handler {
	if t.o.Shared == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := identity.FromContext(r.Context())
		if u == nil || isSessionless(r) {
			next.ServeHTTP(w, r)
			return
		}
		id := r.Header.Get("Mcp-Session-Id")
		switch {
		case id == "":
			if r.Method == http.MethodPost {
				body := peekBody(w, r)
				if methodOf(body) == methodInitialize {
					w = &openedWriter{ResponseWriter: w, opened: func(id string) { t.opened(r, id, body) }}
				}
			}
			next.ServeHTTP(w, r)
			return
		case len(id) > maxSessionID:
			http.Error(w, "session not found", http.StatusNotFound)
			return
		case r.Method == http.MethodDelete:
			t.endShared(w, r, u.Name, id, next)
			return
		}
		h, ok := t.sharing.holding(id)
		if !ok {
			err := t.resume(r, sdk, u.Name, id)
			switch {
			case errors.Is(err, errNotKept):
				next.ServeHTTP(w, r) // the go-sdk's 404
				return
			case err != nil:
				t.log.Warn("a session cannot be resumed on this replica", "session", id, "user", u.Name, "err", err)
				http.Error(w, "session "+id+" cannot be resumed on this replica: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
			if h, ok = t.sharing.holding(id); !ok {
				next.ServeHTTP(w, r) // ended meanwhile
				return
			}
		} else if h.user == u.Name {
			gone, err := t.o.Shared.Refresh(r.Context(), u.Name, id)
			switch {
			case err != nil:
				// The session goes on here with what it has.
				t.log.Debug("a session's state cannot be refreshed from the team store", "session", id, "err", err)
			case gone:
				t.closeHeld(r, id, sdk)
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
		}
		if h.user != u.Name {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		if !h.initialized {
			// Its initialize was answered here, its initialized may have
			// gone to another replica: tell the go-sdk here, unless this
			// request does.
			if r.Method == http.MethodPost && methodOf(peekBody(w, r)) == methodInitialized {
				t.sharing.initialized(id)
			} else if !t.sharing.initialized(id) {
				t.replayInitialized(r.Context(), sdk, id)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// maxSessionID bounds the session IDs looked up in the store (the
// go-sdk's are 26 characters).
const maxSessionID = 128

// opened keeps the session id the go-sdk made for the initialize request
// r (body): called as its answer's header is written, so that the
// client's next request finds it on any replica.
func (t *Transports) opened(r *http.Request, id string, body []byte) {
	opts := httpSessionOptions(r)
	t.sharing.hold(id, identity.NameOf(opts.User), false)
	if err := t.o.Shared.Opened(r.Context(), id, opts, member(body, "params")); err != nil {
		t.log.Warn("a session cannot be kept in the team store: only this replica can answer it", "session", id, "err", err)
	}
}

// endShared is a client's DELETE of its session: the store forgets it;
// this replica's copy, if any, ends (the go-sdk's DELETE); another
// replica's ends at its next request, or when idle.
func (t *Transports) endShared(w http.ResponseWriter, r *http.Request, user, id string, next http.Handler) {
	h, held := t.sharing.holding(id)
	if held && h.user != user {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	existed, err := t.o.Shared.End(r.Context(), user, id)
	switch {
	case held:
		if err != nil {
			t.log.Warn("a session ended here stays in the team store until it expires", "session", id, "err", err)
		}
		next.ServeHTTP(w, r)
	case err != nil:
		http.Error(w, "session "+id+" cannot be ended: "+err.Error(), http.StatusServiceUnavailable)
	case existed:
		w.WriteHeader(http.StatusNoContent)
	default:
		next.ServeHTTP(w, r) // the go-sdk's 404
	}
}

// resume makes user's session id on this replica from the store, once
// however many of its requests arrive at once: errNotKept when the store
// has no such session of theirs.
func (t *Transports) resume(r *http.Request, sdk http.Handler, user, id string) error {
	_, err, _ := t.sharing.resumes.Do(user+"\x00"+id, func() (any, error) {
		if _, ok := t.sharing.holding(id); ok {
			return nil, nil // made meanwhile
		}
		srv, init, err := t.o.Shared.Resume(r.Context(), id, httpSessionOptions(r))
		if err != nil {
			return nil, err
		}
		if srv == nil {
			return nil, errNotKept
		}
		// The client's initialize, again: the go-sdk makes the session,
		// taking srv from the slot, and srv gives it the ID id.
		ctx := context.WithValue(r.Context(), sessionSlotKey{}, &sessionSlot{server: srv})
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "mcpgw-resume", "method": methodInitialize, "params": init})
		rec := replaySDK(ctx, sdk, "", msg)
		if rec.code != http.StatusOK || rec.h.Get("Mcp-Session-Id") != id {
			return nil, fmt.Errorf("replaying the session's initialize: %d %q, session %q", rec.code, rec.body.String(), rec.h.Get("Mcp-Session-Id"))
		}
		t.sharing.hold(id, user, false)
		return nil, nil
	})
	return err
}

// replayInitialized tells the go-sdk that session id is initialized, as
// its client did on another replica.
func (t *Transports) replayInitialized(ctx context.Context, sdk http.Handler, id string) {
	rec := replaySDK(ctx, sdk, id, []byte(`{"jsonrpc":"2.0","method":"`+methodInitialized+`"}`))
	if rec.code != http.StatusAccepted {
		t.log.Warn("replaying a session's initialized", "session", id, "status", rec.code, "body", rec.body.String())
	}
}

// closeHeld ends this replica's copy of session id (the go-sdk's DELETE).
func (t *Transports) closeHeld(r *http.Request, id string, sdk http.Handler) {
	t.hub.CancelHTTPSession(id)
	req, _ := http.NewRequestWithContext(r.Context(), http.MethodDelete, "/mcp", nil)
	req.Header.Set("Mcp-Session-Id", id)
	sdk.ServeHTTP(&recorder{h: http.Header{}}, req)
	t.sharing.closed(id)
}

// replay sends the go-sdk a POST of msg, for session id ("" none), and
// returns its answer.
func replaySDK(ctx context.Context, sdk http.Handler, id string, msg []byte) *recorder {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "/mcp", bytes.NewReader(msg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
	}
	rec := &recorder{h: http.Header{}}
	sdk.ServeHTTP(rec, req)
	if rec.code == 0 {
		rec.code = http.StatusOK
	}
	return rec
}

// recorder is the answer to a replayed request.
type recorder struct {
	h    http.Header
	code int
	body bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.h }
func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}
func (r *recorder) Flush() {}

// peekBody reads r's body and puts it back; nil if it cannot be read.
func peekBody(w http.ResponseWriter, r *http.Request) []byte {
	if r.Body == nil {
		return nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil
	}
	return body
}

// methodOf is the method of the JSON-RPC message body, "" for none.
func methodOf(body []byte) string {
	var m string
	if json.Unmarshal(member(body, "method"), &m) != nil {
		return ""
	}
	return m
}

// openedWriter calls opened with the session ID the go-sdk's answer to an
// initialize names, before the answer's header is sent.
type openedWriter struct {
	http.ResponseWriter
	opened func(id string)
	done   bool
}

func (w *openedWriter) WriteHeader(code int) {
	if !w.done {
		w.done = true
		if id := w.Header().Get("Mcp-Session-Id"); id != "" && code == http.StatusOK {
			w.opened(id)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *openedWriter) Write(b []byte) (int, error) {
	if !w.done {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *openedWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *openedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// needStore answers the control endpoints of approvals with the store's
// error while it cannot be reached: the approvals cannot be listed or
// decided, and an empty list would say there are none.
func (t *Transports) needStore(next http.Handler) http.Handler {
	if t.o.Shared == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/-/approvals" || r.URL.Path == "/-/approve" {
			if err := t.o.Shared.Ping(r.Context()); err != nil {
				http.Error(w, "pending approvals cannot be listed or decided: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
