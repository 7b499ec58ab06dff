package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// loginCmd is `mcpgw login SERVER`: the OAuth login of a remote server,
// stored where the daemon reads it; then the daemon reconnects the server.
func loginCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("login", stderr)
	var c clientFlags
	c.register(fs)
	config := fs.String("config", "", "config file (default: the running daemon's, else "+registry.DefaultConfigPath()+")")
	paste := fs.Bool("paste", false, "paste the redirect URL instead of receiving it")
	timeout := fs.Duration("timeout", 5*time.Minute, "how long to wait for the login")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("login: name one server")
	}
	if *config == "" {
		// A team daemon's server that each user logs in to: the
		// daemon says what the login needs, and keeps it.
		ctl, info, err := c.userLoginServer(ctx, fs.Arg(0))
		if err != nil {
			return err
		}
		if info != nil {
			return userLogin(ctx, ctl, info, terminalBrowser(*paste, stdin, stdout, deploy.OpenBrowser), *timeout, stdout)
		}
		*config = c.daemonConfig(ctx)
	}
	srv, settings, err := registry.LoadOAuthServer(*config, fs.Arg(0))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	err = upstream.LogIn(ctx, srv, oauthStore(settings), terminalBrowser(*paste, stdin, stdout, deploy.OpenBrowser))
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("login: no login within %v", *timeout)
	}
	if err != nil {
		return fmt.Errorf("login %s: %w", srv.Name, err)
	}
	fmt.Fprintf(stdout, "Logged in to %s.\n", srv.Name)
	ctl, err := c.control()
	if err != nil {
		return err
	}
	res, err := ctl.Proxy(ctx, map[string]any{"connect": srv.Name}, nil)
	switch {
	case err != nil:
		fmt.Fprintf(stdout, "The daemon will use it at its next connect (%v).\n", firstLine(err.Error()))
	case res.IsError:
		fmt.Fprintf(stdout, "The daemon could not connect %s yet: %s\n", srv.Name, firstLine(resultText(res)))
	default:
		fmt.Fprintf(stdout, "The daemon has reconnected %s.\n", srv.Name)
	}
	return nil
}

// logoutCmd is `mcpgw logout SERVER`.
func logoutCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("logout", stderr)
	var c clientFlags
	c.register(fs)
	config := fs.String("config", "", "config file (default: the running daemon's, else "+registry.DefaultConfigPath()+")")
	all := fs.Bool("all", false, "also forget the client registered with the authorization server")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: mcpgw logout [--all] SERVER")
	}
	if *config == "" {
		if done, err := c.userLogout(ctx, fs.Arg(0), stdout); done || err != nil {
			return err
		}
		*config = c.daemonConfig(ctx)
	}
	srv, settings, err := registry.LoadOAuthServer(*config, fs.Arg(0))
	if err != nil {
		return err
	}
	if err := oauthStore(settings).Forget(srv.URL, *all); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Logged out of %s.\n", srv.Name)
	return nil
}

// daemonConfig is the config file of the daemon the flags name, when one
// answers (a daemon started with --config reads another file than the
// default); "" (the default file) otherwise.
func (c *clientFlags) daemonConfig(ctx context.Context) string {
	// No daemon answers at once (nothing listens); one that does may be
	// slow on a busy machine, and the default file in its place would be
	// the wrong one.
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	ctl, err := c.control()
	if err != nil {
		return ""
	}
	body, err := ctl.Status(ctx)
	if err != nil {
		return ""
	}
	var r api.Report
	if json.Unmarshal(body, &r) != nil {
		return ""
	}
	return r.Config
}
