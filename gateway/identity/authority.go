package identity

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Authority is the daemon's answer to "who is calling": the Verifier of
// the team configuration in force, made again when a reload changes it
// (a new issuer takes effect for the requests that come after). Its
// methods are safe for concurrent use.
type Authority struct {
	current func() *Config // nil: team mode is off
	o       Options

	// mu guards v, the verifier of cfg, the configuration last seen.
	mu  sync.Mutex
	v   *Verifier
	cfg Config

	// subjectsMu guards subjects, each user's bearer token that expires
	// last among those verified (for token exchange), and sweepAt, the
	// size past which expired ones are dropped.
	subjectsMu sync.Mutex
	subjects   map[string]subject
	sweepAt    int
}

type subject struct {
	token  string
	expiry time.Time
}

// NewAuthority returns the authority of the configurations current
// returns, each time it is asked (nil: team mode is off); o are its
// verifiers' options (nil: the defaults).
func NewAuthority(current func() *Config, o *Options) *Authority {
	a := &Authority{current: current, subjects: map[string]subject{}, sweepAt: 64}
	if o != nil {
		a.o = *o
	}
	return a
}

// ErrOff is Authenticate's error outside team mode.
var ErrOff = errors.New("team mode is off")

// Issuer is the issuer of team mode, "" when it is off.
func (a *Authority) Issuer() string {
	if c := a.current(); c != nil {
		return c.Issuer
	}
	return ""
}

// Authenticate verifies the JWT raw against the configuration in force,
// and keeps it as the user's token to exchange (Subject) if it expires
// later than the one kept.
func (a *Authority) Authenticate(ctx context.Context, raw string) (*User, error) {
	v, err := a.verifier()
	if err != nil {
		return nil, err
	}
	u, err := v.Verify(ctx, raw)
	if err == nil {
		a.keepSubject(u)
	}
	return u, err
}

func (a *Authority) keepSubject(u *User) {
	now := a.now()
	a.subjectsMu.Lock()
	defer a.subjectsMu.Unlock()
	if old, ok := a.subjects[u.Name]; ok && !u.Expiry.After(old.expiry) {
		return
	}
	a.subjects[u.Name] = subject{u.Token, u.Expiry}
	if len(a.subjects) >= a.sweepAt {
		for name, s := range a.subjects {
			if !now.Before(s.expiry) {
				delete(a.subjects, name)
			}
		}
		a.sweepAt = max(64, 2*len(a.subjects))
	}
}

// Subject is the bearer token of user that expires last among those the
// authority verified, while it has not expired: what token exchange
// exchanges for their upstreams' tokens, including for requests (a
// connect, a stream) that carry no token of theirs. Any token of theirs
// does: the upstream learns from it only who they are.
func (a *Authority) Subject(user string) (string, bool) {
	a.subjectsMu.Lock()
	defer a.subjectsMu.Unlock()
	s, ok := a.subjects[user]
	if !ok || !a.now().Before(s.expiry) {
		return "", false
	}
	return s.token, true
}

// TokenEndpoint is the token endpoint of the issuer in force, from its
// discovery document.
func (a *Authority) TokenEndpoint(ctx context.Context) (string, error) {
	v, err := a.verifier()
	if err != nil {
		return "", err
	}
	return v.TokenEndpoint(ctx)
}

func (a *Authority) now() time.Time {
	if a.o.Now != nil {
		return a.o.Now()
	}
	return time.Now()
}

func (a *Authority) verifier() (*Verifier, error) {
	c := a.current()
	if c == nil {
		return nil, ErrOff
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.v != nil && a.cfg == *c {
		return a.v, nil
	}
	v, err := NewVerifier(*c, &a.o)
	if err != nil {
		return nil, err
	}
	a.v, a.cfg = v, *c
	return v, nil
}
