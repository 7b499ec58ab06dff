// Package identity says who is calling, in team mode: it verifies a
// request's bearer token (a JWT) against an OpenID Connect issuer — the
// signature with the issuer's published keys, iss, aud, exp and nbf — and
// names the user and groups it carries. The rest of the daemon sees the
// outcome as a *User in the request's context.
//
// The token checks are go-oidc's (github.com/coreos/go-oidc/v3), on
// go-jose; this package adds what a long-running gateway needs around
// them: the issuer's discovery and keys fetched lazily and again on an
// unknown key ID, no more than once per RefreshInterval (a caller cannot
// make the daemon hammer the issuer with made-up key IDs), and a
// configuration that may change at a reload (Authority).
package identity

import (
	"context"
	"slices"
	"time"
)

// User is who a verified token names.
type User struct {
	// Name is the value of the configured user claim (default "sub").
	Name string
	// Groups are the values of the configured groups claim, if any.
	Groups []string
	// Token is the bearer token that named the user, and Expiry its exp:
	// what token exchange exchanges (Exchanger). Kept in memory only,
	// never logged or stored.
	Token  string
	Expiry time.Time
}

// InGroup reports whether u is in group.
func (u *User) InGroup(group string) bool { return u != nil && slices.Contains(u.Groups, group) }

// NameOf is u's name, "" for nil (no team mode).
func NameOf(u *User) string {
	if u == nil {
		return ""
	}
	return u.Name
}

type userKey struct{}

// NewContext returns ctx carrying u.
func NewContext(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// FromContext returns the user ctx carries; nil outside team mode.
func FromContext(ctx context.Context) *User {
	u, _ := ctx.Value(userKey{}).(*User)
	return u
}
