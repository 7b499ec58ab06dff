package gateway

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// A shim session's state (its mode, activated tools and grants) outlives
// the daemon, so that the shim can resume the session on the next one. It
// is the session's alone: the daemon gives the session's shim a random
// resume secret in its welcome (wire.Welcome.Secret), keeps its digest in
// the state, and restores the state only for a resume that presents it,
// while no session of that ID is connected, from a file that carries the
// install key's HMAC (Options.StateKey). Session IDs are not secret (the
// audit log, the page and `mcpgw approve --list` show them); anything less
// starts a fresh session.

// sessionState is what a shim session keeps across daemon restarts.
type sessionState struct {
	Mode      string   `json:"mode"`
	Activated []string `json:"activated,omitempty"` // toolsearch: gateway names
	Grants    []string `json:"grants,omitempty"`    // approvals for the session (see grant)
	// Secret is the SHA-256 of the session's resume secret, in hex.
	Secret string `json:"secret"`
}

// stateFile is a session's state file: the state as written, and its
// HMAC under the state key, bound to the session's ID.
type stateFile struct {
	State json.RawMessage `json:"state"`
	MAC   string          `json:"mac"`
}

// sessionStateMaxAge bounds how long a session's state is kept after its
// daemon went away without the session ending (kill -9, reboot).
const sessionStateMaxAge = 24 * time.Hour

// shimClaims are the IDs of the shim sessions being served: a resume of
// one of them is not its shim's (that shim is connected).
type shimClaims struct {
	mu  sync.Mutex
	ids map[string]bool
}

// claimShim decides which session a shim's handshake (opts) opens, and
// reserves its ID until releaseShim. It returns the options to serve it
// with — ID and Secret are what the shim is told, and resumes with — and
// the state to restore, nil for a fresh session. A resume is honoured
// when opts.Secret is the secret of the state kept under opts.ID, that
// state's file carries the state key's HMAC, and no session of that ID is
// connected. Otherwise the session starts afresh: under the ID asked for
// when nothing is kept under it, else under a new one, so that it neither
// reads nor overwrites another session's state; a refused resume, or a
// fresh session naming another's ID, is logged at warn.
func (s *Hub) claimShim(opts SessionOptions) (SessionOptions, *sessionState) {
	if opts.ID == "" {
		opts.Resume, opts.Secret = false, ""
		return opts, nil
	}
	presented, resume := opts.Secret, opts.Resume
	opts.Resume, opts.Secret = false, randomToken()
	s.shims.mu.Lock()
	defer s.shims.mu.Unlock()
	var st *sessionState
	var refused string
	switch {
	case s.shims.ids[opts.ID]:
		refused = "a session of that ID is connected"
	case resume:
		st, refused = s.loadSessionState(opts.ID, presented)
	default:
		if path := s.statePath(opts.ID); path != "" {
			if _, err := os.Lstat(path); err == nil {
				refused = "state is kept under that ID for another session"
			}
		}
	}
	if st != nil {
		opts.Resume, opts.Secret = true, presented
	}
	if refused != "" {
		id := randomToken()
		s.log.Warn("a shim session named a session that is not its own; it starts afresh", "session", opts.ID, "resume", resume, "reason", refused, "new_session", id)
		opts.ID = id
	}
	if s.shims.ids == nil {
		s.shims.ids = make(map[string]bool)
	}
	s.shims.ids[opts.ID] = true
	return opts, st
}

// releaseShim frees a shim session's ID: its session has ended.
func (s *Hub) releaseShim(id string) {
	if id == "" {
		return
	}
	s.shims.mu.Lock()
	delete(s.shims.ids, id)
	s.shims.mu.Unlock()
}

// randomToken is 128 random bits in hex: a session ID or a resume secret.
func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func secretDigest(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// stateMAC is the HMAC of the state data kept under id.
func (s *Hub) stateMAC(id string, data []byte) []byte {
	m := hmac.New(sha256.New, s.stateKey)
	m.Write([]byte("mcpgw session state\x00"))
	m.Write([]byte(id))
	m.Write([]byte{0})
	m.Write(data)
	return m.Sum(nil)
}

// statePath is where the session with id keeps its state; "" when states
// are not kept or id is not a plain token.
func (s *Hub) statePath(id string) string {
	if s.opts.SessionDir == "" || id == "" || len(id) > 64 || filepath.Base(id) != id || id[0] == '.' {
		return ""
	}
	return filepath.Join(s.opts.SessionDir, id+".json")
}

// loadSessionState reads the state kept under id for a resume presenting
// secret. It returns nil and "" when none is kept, nil and why when the
// state is not the resume's to have.
func (s *Hub) loadSessionState(id, secret string) (*sessionState, string) {
	path := s.statePath(id)
	if path == "" {
		return nil, ""
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ""
	}
	if err != nil {
		return nil, "its state is unreadable: " + err.Error()
	}
	var f stateFile
	if json.Unmarshal(data, &f) != nil {
		return nil, "its state file is not one this daemon wrote"
	}
	if mac, herr := hex.DecodeString(f.MAC); herr != nil || !hmac.Equal(mac, s.stateMAC(id, f.State)) {
		return nil, "its state file does not carry this install's key (written by hand, changed, or from an older mcpgw)"
	}
	var st sessionState
	if json.Unmarshal(f.State, &st) != nil {
		return nil, "its state is unreadable"
	}
	if secret == "" {
		return nil, "the resume presents no secret (a shim older than the daemon: restart the client to resume across daemon restarts)"
	}
	if subtle.ConstantTimeCompare([]byte(secretDigest(secret)), []byte(st.Secret)) != 1 {
		return nil, "the resume presents another secret"
	}
	return &st, ""
}

// saveSessionState writes ss's state (temp file and rename: a reader sees
// the old state or the new one).
func (s *Hub) saveSessionState(ss *session) {
	if s.saveShared(ss) {
		return // an HTTP session in team.store (teamsessions.go)
	}
	path := s.statePath(ss.opts.ID)
	if path == "" || ss.secret == "" {
		return
	}
	ss.mu.Lock()
	st := sessionState{Mode: string(ss.mode.Name()), Secret: secretDigest(ss.secret)}
	for name := range ss.activated {
		st.Activated = append(st.Activated, name)
	}
	for g := range ss.grants {
		st.Grants = append(st.Grants, g)
	}
	ss.mu.Unlock()
	slices.Sort(st.Activated)
	slices.Sort(st.Grants)
	state, _ := json.Marshal(st)
	data, _ := json.Marshal(stateFile{State: state, MAC: hex.EncodeToString(s.stateMAC(ss.opts.ID, state))})
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
func (s *Hub) dropSessionState(id string) {
	if path := s.statePath(id); path != "" {
		os.Remove(path)
	}
}

// pruneSessionStates removes states older than sessionStateMaxAge: their
// sessions ended while no daemon ran.
func (s *Hub) pruneSessionStates() {
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
