package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpgw/mcpgw/gateway/api"
)

// ErrNoUserLogins: the daemon takes no user's own login (it is not in
// team mode, or older than this CLI): a login is made as on a personal
// daemon.
var ErrNoUserLogins = errors.New("the daemon takes no user's own login")

func loginPath(server string) string { return "/-/logins/" + url.PathEscape(server) }

// LoginServer asks a team daemon what a login of the caller (the user
// Token names) to server needs; ErrNoUserLogins from a daemon that takes
// no user's login.
func (c *Control) LoginServer(ctx context.Context, server string) (*api.LoginServer, error) {
	body, status, err := c.request(ctx, http.MethodGet, loginPath(server))
	switch {
	case err != nil:
		return nil, err
	case status == http.StatusNotFound:
		return nil, ErrNoUserLogins
	case status != http.StatusOK:
		return nil, loginError(status, body)
	}
	var out api.LoginServer
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("decoding the daemon's answer: %w", err)
	}
	return &out, nil
}

// SaveLogin hands creds, the credentials of the caller's login to server,
// to a team daemon, which keeps them for that user only.
func (c *Control) SaveLogin(ctx context.Context, server string, creds any) error {
	data, err := json.Marshal(creds)
	if err != nil {
		return err
	}
	body, status, err := c.send(ctx, http.MethodPut, loginPath(server), data)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return loginError(status, body)
	}
	return nil
}

// ForgetLogin asks a team daemon to forget the caller's login to server;
// ErrNoUserLogins from a daemon that takes no user's login.
func (c *Control) ForgetLogin(ctx context.Context, server string) error {
	body, status, err := c.request(ctx, http.MethodDelete, loginPath(server))
	switch {
	case err != nil:
		return err
	case status == http.StatusNotFound:
		return ErrNoUserLogins
	case status != http.StatusOK:
		return loginError(status, body)
	}
	return nil
}

// RefusedError is a daemon's refusal of a request about a user's login,
// with its answer.
type RefusedError struct {
	Status int
	Msg    string
}

func (e *RefusedError) Error() string { return "the daemon refused: " + e.Msg }

func loginError(status int, body []byte) error {
	msg := strings.TrimSpace(string(body))
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &RefusedError{Status: status, Msg: msg}
}
