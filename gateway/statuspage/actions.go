package statuspage

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
)

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
func Register(mux *http.ServeMux, h Hub, protect func(http.HandlerFunc) http.Handler) {
	mux.Handle("GET /{$}", protect(servePage(h)))
	mux.Handle("POST /{$}", protect(servePage(h))) // the token form, when one is set
	mux.Handle("POST /-/connect", protect(serveConnect(h)))
	mux.Handle("POST /-/enable", protect(serveEnable(h, true)))
	mux.Handle("POST /-/disable", protect(serveEnable(h, false)))
	mux.Handle("POST /-/trust", protect(serveTrust(h, true)))
	mux.Handle("POST /-/refuse", protect(serveTrust(h, false)))
	mux.Handle("POST /-/login", protect(serveLogin(h)))
	mux.Handle("GET /-/logs", protect(serveLogs(h)))
	mux.Handle("GET /-/approvals", protect(serveApprovals(h)))
	mux.Handle("POST /-/approve", protect(serveApprove(h)))
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
func serveConnect(h Hub) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.FormValue("server")
		err := h.Reconnect(r.Context(), name)
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
func serveEnable(h Hub, on bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.FormValue("server")
		if err := h.SetEnabled(r.Context(), name, on); err != nil {
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
func serveTrust(h Hub, trust bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		dir := r.FormValue("dir")
		if !slices.ContainsFunc(pendingProjects(h.Sessions(r.Context())), func(p Project) bool { return p.Dir == dir }) {
			http.Error(w, strconv.Quote(dir)+" is not a project waiting for trust", http.StatusNotFound)
			return
		}
		msg := "refused " + dir + " until the daemon stops; its servers do not start"
		if trust {
			var err error
			if msg, err = h.Trust(dir); err != nil {
				fail(w, err, http.StatusInternalServerError)
				return
			}
		} else {
			h.Refuse(dir)
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
func serveLogin(h Hub) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		authURL, err := h.Login(r.Context(), r.FormValue("server"))
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

// logStderrLines is how many of a server's last stderr lines /-/logs
// gives.
const logStderrLines = 50

// serveLogs is GET /-/logs?server=NAME: the daemon's lines about the
// server, then its last stderr lines ("stderr: "), as text (`mcpgw logs`).
func serveLogs(h Hub) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Query().Get("server")
		f, ok := findServer(h.Servers(r.Context()), name)
		if !ok {
			http.Error(w, fmt.Sprintf("no server %q", name), http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		for _, l := range serverLines(h, f) {
			fmt.Fprintln(w, l)
		}
		if usable(f) {
			for _, l := range h.Stderr(r.Context(), name, logStderrLines) {
				fmt.Fprintln(w, "stderr: "+l)
			}
		}
	}
}

// serveApprovals is GET /-/approvals: the pending approvals as JSON.
func serveApprovals(h Hub) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(h.Approvals(r.Context()))
	}
}

// serveApprove is POST /-/approve with id and decision (once, tool,
// server, deny; "allow" is once) as form or query fields: the page's
// buttons and `mcpgw approve` (which adds by=cli).
func serveApprove(h Hub) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, decision := r.FormValue("id"), r.FormValue("decision")
		if decision == "allow" || decision == "" {
			decision = "once"
		}
		by := "page"
		if r.FormValue("by") == "cli" {
			by = "cli"
		}
		p, err := h.Decide(r.Context(), id, decision, by)
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
