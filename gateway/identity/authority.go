package identity

import (
	"context"
	"errors"
	"sync"
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
}

// NewAuthority returns the authority of the configurations current
// returns, each time it is asked (nil: team mode is off); o are its
// verifiers' options (nil: the defaults).
func NewAuthority(current func() *Config, o *Options) *Authority {
	a := &Authority{current: current}
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

// Authenticate verifies the JWT raw against the configuration in force.
func (a *Authority) Authenticate(ctx context.Context, raw string) (*User, error) {
	v, err := a.verifier()
	if err != nil {
		return nil, err
	}
	return v.Verify(ctx, raw)
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
