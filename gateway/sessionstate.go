package gateway

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// sessionState is what a shim session keeps across daemon restarts.
type sessionState struct {
	Mode      string   `json:"mode"`
	Activated []string `json:"activated,omitempty"` // toolsearch: gateway names
	Grants    []string `json:"grants,omitempty"`    // approvals for the session (see grant)
}

// sessionStateMaxAge bounds how long a session's state is kept after its
// daemon went away without the session ending (kill -9, reboot).
const sessionStateMaxAge = 24 * time.Hour

// statePath is where the session with id keeps its state; "" when states
// are not kept or id is not a plain token.
func (s *Server) statePath(id string) string {
	if s.opts.SessionDir == "" || id == "" || len(id) > 64 || filepath.Base(id) != id || id[0] == '.' {
		return ""
	}
	return filepath.Join(s.opts.SessionDir, id+".json")
}

// loadSessionState reads a resumed session's state; nil when none.
func (s *Server) loadSessionState(id string) *sessionState {
	path := s.statePath(id)
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var st sessionState
	if json.Unmarshal(data, &st) != nil {
		s.log.Warn("session state unreadable; starting afresh", "path", path)
		return nil
	}
	return &st
}

// saveSessionState writes ss's state (temp file and rename: a reader sees
// the old state or the new one).
func (s *Server) saveSessionState(ss *session) {
	path := s.statePath(ss.opts.ID)
	if path == "" {
		return
	}
	ss.mu.Lock()
	st := sessionState{Mode: string(ss.mode)}
	for name := range ss.activated {
		st.Activated = append(st.Activated, name)
	}
	for g := range ss.grants {
		st.Grants = append(st.Grants, g)
	}
	ss.mu.Unlock()
	slices.Sort(st.Activated)
	slices.Sort(st.Grants)
	data, _ := json.Marshal(st)
	if err := os.MkdirAll(s.opts.SessionDir, 0o700); err != nil {
		s.log.Warn("saving session state", "err", err)
		return
	}
	tmp, err := os.CreateTemp(s.opts.SessionDir, ".state-*")
	if err != nil {
		s.log.Warn("saving session state", "err", err)
		return
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
		s.log.Warn("saving session state", "path", path)
	}
}

// dropSessionState forgets the state of a session that has ended.
func (s *Server) dropSessionState(id string) {
	if path := s.statePath(id); path != "" {
		os.Remove(path)
	}
}

// pruneSessionStates removes states older than sessionStateMaxAge: their
// sessions ended while no daemon ran.
func (s *Server) pruneSessionStates() {
	if s.opts.SessionDir == "" {
		return
	}
	entries, err := os.ReadDir(s.opts.SessionDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > sessionStateMaxAge {
			os.Remove(filepath.Join(s.opts.SessionDir, e.Name()))
		}
	}
}
