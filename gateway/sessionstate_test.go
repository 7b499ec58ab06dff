package gateway

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgw/mcpgw/registry"
)

// lockedBuffer is a log destination tests read while the gateway writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestClaimShim: the handshake's decision. A resume restores a session's
// state only with the session's secret, from a file this install's key
// signed for that ID, while no session of the ID is connected; anything
// else is a fresh session, under a new ID when the one asked for is
// another session's, and logged at warn.
func TestClaimShim(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := []byte("install-key-install-key-install-")
	var logs lockedBuffer
	gw := New(&registry.Config{}, &Options{NoBootstrap: true, SessionDir: dir, StateKey: key,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	t.Cleanup(func() { gw.Close() })

	// A session "a" with a grant, saved as the daemon saves it.
	const secret = "5ec2e75ec2e75ec2e75ec2e75ec2e75e"
	gw.saveSessionState(&session{opts: SessionOptions{ID: "a"}, secret: secret, mode: toolSearchMode{},
		activated: map[string]bool{"p_read": true}, grants: map[string]bool{"server:p": true}})
	valid, err := os.ReadFile(filepath.Join(dir, "a.json"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(id, content string) {
		if err := os.WriteFile(filepath.Join(dir, id+".json"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// By hand: the old format, a changed grant, another ID's file, and a
	// file signed with another install's key.
	write("hand", `{"mode":"proxy","grants":["server:guard"]}`)
	write("changed", strings.Replace(string(valid), `server:p`, `server:q`, 1))
	write("copy", string(valid))
	other := New(&registry.Config{}, &Options{NoBootstrap: true, SessionDir: dir, StateKey: []byte("another-install-another-install-")})
	t.Cleanup(func() { other.Close() })
	other.saveSessionState(&session{opts: SessionOptions{ID: "foreign"}, secret: secret, mode: proxyMode{}, grants: map[string]bool{"server:p": true}})

	for _, tc := range []struct {
		name    string
		opts    SessionOptions
		claimed bool // a session of the ID is being served
		resumed bool // the state is restored
		sameID  bool // the session keeps the ID it asked for
		warn    bool
	}{
		{name: "the session's shim", opts: SessionOptions{ID: "a", Resume: true, Secret: secret}, resumed: true, sameID: true},
		{name: "another secret", opts: SessionOptions{ID: "a", Resume: true, Secret: "0000000000000000000000000000000"}, warn: true},
		{name: "no secret (a shim older than the daemon)", opts: SessionOptions{ID: "a", Resume: true}, warn: true},
		{name: "the session is connected", opts: SessionOptions{ID: "a", Resume: true, Secret: secret}, claimed: true, warn: true},
		{name: "a fresh session naming a kept ID", opts: SessionOptions{ID: "a"}, warn: true},
		{name: "a state file written by hand", opts: SessionOptions{ID: "hand", Resume: true, Secret: secret}, warn: true},
		{name: "a state file changed", opts: SessionOptions{ID: "changed", Resume: true, Secret: secret}, warn: true},
		{name: "another session's file under this ID", opts: SessionOptions{ID: "copy", Resume: true, Secret: secret}, warn: true},
		{name: "another install's file", opts: SessionOptions{ID: "foreign", Resume: true, Secret: secret}, warn: true},
		{name: "nothing kept", opts: SessionOptions{ID: "gone", Resume: true, Secret: secret}, sameID: true},
		{name: "a new session", opts: SessionOptions{ID: "new"}, sameID: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.claimed {
				held, _ := gw.claimShim(SessionOptions{ID: tc.opts.ID, Resume: true, Secret: secret})
				if held.ID != tc.opts.ID {
					t.Fatalf("the connected session was given ID %q", held.ID)
				}
				defer gw.releaseShim(held.ID)
			}
			before := len(logs.String())
			got, st := gw.claimShim(tc.opts)
			defer gw.releaseShim(got.ID)
			if (st != nil) != tc.resumed || got.Resume != tc.resumed {
				t.Fatalf("state %+v, Resume %v; want resumed %v", st, got.Resume, tc.resumed)
			}
			if tc.resumed && (got.Secret != secret || len(st.Grants) != 1 || st.Grants[0] != "server:p" || st.Mode != string(ModeToolSearch)) {
				t.Errorf("resumed with secret %q, state %+v", got.Secret, st)
			}
			if !tc.resumed && (got.Secret == "" || got.Secret == tc.opts.Secret) {
				t.Errorf("a fresh session's secret is %q, want a new one", got.Secret)
			}
			if (got.ID == tc.opts.ID) != tc.sameID || len(got.ID) == 0 {
				t.Errorf("ID %q, want the one asked for: %v", got.ID, tc.sameID)
			}
			warned := strings.Contains(logs.String()[before:], "level=WARN msg=\"a shim session named a session that is not its own")
			if warned != tc.warn {
				t.Errorf("warned %v, want %v: %s", warned, tc.warn, logs.String()[before:])
			}
		})
	}
	// Nothing refused touched the state it was refused.
	if now, _ := os.ReadFile(filepath.Join(dir, "a.json")); !bytes.Equal(now, valid) {
		t.Errorf("a's state changed: %s", now)
	}
}
