package statuspage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/mcpgw/mcpgw/gateway/api"
)

// Daemon is what the page reads of the daemon and asks of it. Errors
// that are the caller's (no such server, nothing to decide) are *Error,
// with the HTTP status to answer.
type Daemon interface {
	// PageData is everything the page shows; query, if not empty, is a
	// search of the tools as the model would make it.
	PageData(ctx context.Context, query string) *Data
	// Reconnect connects server now, or again.
	Reconnect(ctx context.Context, server string) error
	// SetEnabled turns server on or off until the daemon stops.
	SetEnabled(server string, on bool) error
	// TrustProject trusts dir, a project waiting for trust (its servers
	// may start), or refuses it until the daemon stops; the answer says
	// what was done.
	TrustProject(dir string, trust bool) (string, error)
	// Login starts (or joins) the OAuth login of server and returns the
	// authorization URL to send the browser to.
	Login(ctx context.Context, server string) (authURL string, err error)
	// ServerLog is the daemon's recent lines about server, its stderr's
	// after them (prefixed "stderr: ").
	ServerLog(server string) ([]string, error)
	// Approvals are the calls waiting for the user's decision; Decide
	// makes one: once, tool, server or deny; by is "page" or "cli". In
	// team mode, the user is the one ctx carries (identity.FromContext):
	// another user's calls are neither listed nor decided.
	Approvals(ctx context.Context) []api.PendingApproval
	Decide(ctx context.Context, id, decision, by string) (api.PendingApproval, error)
}

// Error is a refusal with the HTTP status to answer it with.
type Error struct {
	Status int
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

// Errorf is an *Error.
func Errorf(status int, format string, a ...any) error {
	return &Error{Status: status, Msg: fmt.Sprintf(format, a...)}
}

// Register adds the page and its actions to mux, each through protect
// (the control API's protection: token or owner, same origin, loopback).
func Register(mux *http.ServeMux, d Daemon, protect func(http.HandlerFunc) http.Handler) {
	mux.Handle("GET /{$}", protect(servePage(d)))
	mux.Handle("POST /{$}", protect(servePage(d))) // the token form, when one is set
	mux.Handle("POST /-/connect", protect(serveConnect(d)))
	mux.Handle("POST /-/enable", protect(serveEnable(d, true)))
	mux.Handle("POST /-/disable", protect(serveEnable(d, false)))
	mux.Handle("POST /-/trust", protect(serveTrust(d, true)))
	mux.Handle("POST /-/refuse", protect(serveTrust(d, false)))
	mux.Handle("POST /-/login", protect(serveLogin(d)))
	mux.Handle("GET /-/logs", protect(serveLogs(d)))
	mux.Handle("GET /-/approvals", protect(serveApprovals(d)))
	mux.Handle("POST /-/approve", protect(serveApprove(d)))
}

// IsForm reports whether r is a browser's form post or navigation: its
// answer is a redirect back to the page, not text.
func IsForm(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	return ct == "application/x-www-form-urlencoded" || r.Header.Get("Sec-Fetch-Mode") == "navigate"
}

// fail answers err: its own status for an *Error, else fallback.
func fail(w http.ResponseWriter, err error, fallback int) {
	var e *Error
	if errors.As(err, &e) {
		http.Error(w, e.Msg, e.Status)
		return
	}
	http.Error(w, err.Error(), fallback)
}

func text(w http.ResponseWriter, format string, a ...any) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, format, a...)
}

// serveConnect is POST /-/connect?server=NAME (or a form field): connect
// or reconnect a server now, as `mcpgw connect` does. A browser's form post
// comes back to the page.
func serveConnect(d Daemon) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.FormValue("server")
		err := d.Reconnect(r.Context(), name)
		var refused *Error
		if errors.As(err, &refused) {
			fail(w, err, 0)
			return
		}
		if IsForm(r) {
			http.Redirect(w, r, "/#server-"+name, http.StatusSeeOther)
			return
		}
		if err != nil {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintln(w, err)
			return
		}
		text(w, "connected %s\n", name)
	}
}

// serveEnable is POST /-/enable and /-/disable ?server=NAME (or a form
// field): the server on or off until the daemon stops.
func serveEnable(d Daemon, on bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.FormValue("server")
		if err := d.SetEnabled(name, on); err != nil {
			fail(w, err, http.StatusNotFound)
			return
		}
		if IsForm(r) {
			http.Redirect(w, r, "/#server-"+name, http.StatusSeeOther)
			return
		}
		state := "enabled"
		if !on {
			state = "disabled"
		}
		text(w, "%s %s until the daemon stops\n", state, name)
	}
}

// serveTrust is POST /-/trust and /-/refuse with dir=DIR, a directory the
// page lists as pending.
func serveTrust(d Daemon, trust bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		msg, err := d.TrustProject(r.FormValue("dir"), trust)
		if err != nil {
			fail(w, err, http.StatusInternalServerError)
			return
		}
		if IsForm(r) {
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		text(w, "%s\n", msg)
	}
}

// serveLogin is POST /-/login with server=NAME: it answers with a redirect
// to the authorization URL (form posts) or the URL as text.
func serveLogin(d Daemon) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		authURL, err := d.Login(r.Context(), r.FormValue("server"))
		switch {
		case err != nil && r.Context().Err() != nil:
			return
		case err != nil:
			fail(w, err, http.StatusBadGateway)
			return
		case IsForm(r):
			http.Redirect(w, r, authURL, http.StatusSeeOther)
			return
		}
		text(w, "%s\n", authURL)
	}
}

// serveLogs is GET /-/logs?server=NAME: the daemon's lines about the
// server and its last stderr lines, as text (`mcpgw logs`).
func serveLogs(d Daemon) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		lines, err := d.ServerLog(r.URL.Query().Get("server"))
		if err != nil {
			fail(w, err, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
	}
}

// serveApprovals is GET /-/approvals: the pending approvals as JSON.
func serveApprovals(d Daemon) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(d.Approvals(r.Context()))
	}
}

// serveApprove is POST /-/approve with id and decision (once, tool,
// server, deny; "allow" is once) as form or query fields: the page's
// buttons and `mcpgw approve` (which adds by=cli).
func serveApprove(d Daemon) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, decision := r.FormValue("id"), r.FormValue("decision")
		if decision == "allow" || decision == "" {
			decision = "once"
		}
		by := "page"
		if r.FormValue("by") == "cli" {
			by = "cli"
		}
		p, err := d.Decide(r.Context(), id, decision, by)
		if IsForm(r) {
			http.Redirect(w, r, "/#approvals", http.StatusSeeOther)
			return
		}
		if err != nil {
			fail(w, err, http.StatusBadRequest)
			return
		}
		word := "allowed"
		if decision == "deny" {
			word = "denied"
		}
		text(w, "%s %s on %s (%s)\n", word, p.Tool, p.Server, id)
	}
}
