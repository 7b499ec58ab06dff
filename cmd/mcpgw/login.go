package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
	"github.com/mcpgw/mcpgw/upstream/oauth"
)

// loginCmd is `mcpgw login SERVER`: the OAuth login of a remote server,
// stored where the daemon reads it; then the daemon reconnects the server.
func loginCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("login", stderr)
	var c clientFlags
	c.register(fs)
	config := fs.String("config", "", "config file (default "+registry.DefaultConfigPath()+")")
	paste := fs.Bool("paste", false, "paste the redirect URL instead of receiving it")
	timeout := fs.Duration("timeout", 5*time.Minute, "how long to wait for the login")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("login: name one server")
	}
	srv, err := oauthServer(*config, fs.Arg(0))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	opts := oauth.LoginOptions{ServerURL: srv.URL, Client: upstream.OAuthClient(srv), Store: oauthStore()}
	if srv.OAuth != nil && srv.OAuth.GrantType == registry.GrantClientCredentials {
		_, err = oauth.ClientCredentials(ctx, opts)
	} else {
		opts.Browser = oauth.TerminalBrowser(*paste, stdin, stdout, deploy.OpenBrowser)
		_, err = oauth.Login(ctx, opts)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("login: no login within %v", *timeout)
	}
	if err != nil {
		return fmt.Errorf("login %s: %w", srv.Name, err)
	}
	fmt.Fprintf(stdout, "Logged in to %s.\n", srv.Name)
	res, err := c.control().Proxy(ctx, map[string]any{"connect": srv.Name})
	switch {
	case err != nil:
		fmt.Fprintf(stdout, "The daemon will use it at its next connect (%v).\n", firstLine(err.Error()))
	case res.IsError:
		fmt.Fprintf(stdout, "The daemon could not connect %s yet: %s\n", srv.Name, resultText(res))
	default:
		fmt.Fprintf(stdout, "The daemon has reconnected %s.\n", srv.Name)
	}
	return nil
}

// logoutCmd is `mcpgw logout SERVER`.
func logoutCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("logout", stderr)
	config := fs.String("config", "", "config file (default "+registry.DefaultConfigPath()+")")
	all := fs.Bool("all", false, "also forget the client registered with the authorization server")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: mcpgw logout [--all] SERVER")
	}
	srv, err := oauthServer(*config, fs.Arg(0))
	if err != nil {
		return err
	}
	if err := oauthStore().Forget(srv.URL, *all); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Logged out of %s.\n", srv.Name)
	return nil
}

// oauthServer finds name in the config: a remote server.
func oauthServer(config, name string) (*registry.Server, error) {
	cfg, err := registry.Load(config, &registry.LoadOptions{})
	if err != nil {
		return nil, err
	}
	srv, ok := cfg.Servers[name]
	switch {
	case !ok:
		return nil, fmt.Errorf("no server %q in %s", name, cfg.Path)
	case srv.URL == "":
		return nil, fmt.Errorf("%s is a stdio server: only remote servers log in", name)
	case srv.Auth != registry.AuthOAuth:
		return nil, fmt.Errorf(`%s does not use OAuth: add "auth": "oauth" to its entry in %s`, name, cfg.Path)
	}
	return srv, nil
}

// resultText is the text of a tool result, on one line.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return firstLine(strings.Join(parts, " "))
}
