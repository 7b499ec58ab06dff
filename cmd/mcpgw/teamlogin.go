package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/internal/control"
	"github.com/mcpgw/mcpgw/upstream/oauth"
)

// A team daemon's server that each user logs in to with their own login
// ("auth": "oauth", "isolation": "user"): `mcpgw login SERVER`, with the
// user's token in $MCPGW_TOKEN (or --token-file) and the daemon's --url,
// runs the browser flow on the user's machine with what the daemon says
// the login needs, and hands the credentials to the daemon, which keeps
// them for that user only. The user has no copy of the configuration.

// userLoginServer asks the daemon the flags name whether server is one
// the caller logs in to with their own login, and what that needs. nil,
// nil: the daemon takes no user's login (a personal daemon), or none
// answers; the login is then made as on a personal daemon.
func (c *clientFlags) userLoginServer(ctx context.Context, server string) (*control.Control, *api.LoginServer, error) {
	ctl, err := c.control()
	if err != nil {
		return nil, nil, nil // the daemon is not asked
	}
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	info, err := ctl.LoginServer(qctx, server)
	var refused *control.RefusedError
	switch {
	case errors.As(err, &refused):
		return nil, nil, fmt.Errorf("login %s: %w", server, err)
	case err != nil:
		return nil, nil, nil
	}
	return ctl, info, nil
}

// userLogin logs the caller in to info's server and hands the credentials
// to the daemon.
func userLogin(ctx context.Context, ctl *control.Control, info *api.LoginServer, browser oauth.Browser, timeout time.Duration, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	creds, err := oauth.Login(ctx, oauth.LoginOptions{
		ServerURL: info.URL,
		Client: oauth.Client{
			ClientID: info.ClientID, ClientSecret: info.ClientSecret, ClientMetadataURL: info.ClientMetadataURL,
			Scope: info.Scope, RedirectURI: info.RedirectURI, AuthorizationParams: info.AuthorizationParams,
			AllowPrivateNetwork: info.AllowPrivateNetwork,
		},
		// Nothing of the login stays on this machine: the daemon keeps it.
		Store:   &oauth.Store{Backend: &oauth.Memory{}},
		Browser: browser,
	})
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("login: no login within %v", timeout)
	}
	if err != nil {
		return fmt.Errorf("login %s: %w", info.Server, err)
	}
	if err := ctl.SaveLogin(ctx, info.Server, creds); err != nil {
		return fmt.Errorf("login %s: handing the login to the daemon: %w", info.Server, err)
	}
	fmt.Fprintf(stdout, "Logged in to %s. The team daemon keeps this login for you alone.\n", info.Server)
	res, err := ctl.Proxy(ctx, map[string]any{"connect": info.Server}, nil)
	switch {
	case err != nil:
		fmt.Fprintf(stdout, "The daemon will use it at your next call (%v).\n", firstLine(err.Error()))
	case res.IsError:
		fmt.Fprintf(stdout, "The daemon could not connect %s yet: %s\n", info.Server, firstLine(resultText(res)))
	default:
		fmt.Fprintf(stdout, "The daemon has connected %s for you.\n", info.Server)
	}
	return nil
}

// userLogout asks the daemon the flags name to forget the caller's own
// login to server. done is false when the daemon takes no user's login
// (or none answers): the logout is then made as on a personal daemon.
func (c *clientFlags) userLogout(ctx context.Context, server string, stdout io.Writer) (done bool, err error) {
	ctl, err := c.control()
	if err != nil {
		return false, nil // the daemon is not asked
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = ctl.ForgetLogin(ctx, server)
	var refused *control.RefusedError
	switch {
	case errors.As(err, &refused):
		return true, fmt.Errorf("logout %s: %w", server, err)
	case err != nil:
		return false, nil
	}
	fmt.Fprintf(stdout, "Logged out of %s: the team daemon has forgotten your login.\n", server)
	return true, nil
}
