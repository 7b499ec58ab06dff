package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
	"unicode"

	"github.com/mcpgw/mcpgw/registry"
)

// secretCommandTimeout bounds one "!cmd" secret command: long enough for a
// password manager that asks its agent, short enough that a hung one only
// fails its connect.
const secretCommandTimeout = 30 * time.Second

// ErrSecretCommandRefused is returned when a "!cmd" value belongs to a
// server whose definition may not run commands (registry.Server.SecretCommands).
var ErrSecretCommandRefused = errors.New(`"!command" values run only for servers defined in mcpgw's own config, Pi's config or a trusted project file`)

// resolveSecrets returns srv with the secret conventions of env, header and
// bearer token values applied, the way pi-mcp-adapter applies them when it
// starts a server:
//
//   - "!!text" is the literal "!text";
//   - "!cmd args" is the output of running cmd (trailing newlines cut),
//     run now, at connect time, without a shell unless the value uses
//     shell syntax (pipes, redirections, variables, quotes);
//   - anything else is used as written.
//
// bearerTokenEnv, when no bearerToken is set, is read from the environment
// now, so that a rotated token is used by the next connect. The returned
// Server is a copy; srv is not modified. Errors name the field but never a
// value or a command's output; a command's stderr is included, since that
// is where password managers say what went wrong.
func (p *Pool) resolveSecrets(ctx context.Context, srv *registry.Server) (*registry.Server, error) {
	out := *srv
	resolve := func(field, v string) (string, error) {
		switch {
		case strings.HasPrefix(v, "!!"):
			return v[1:], nil
		case strings.HasPrefix(v, "!"):
			if !srv.SecretCommands {
				return "", fmt.Errorf("%s: %w (%s defines it)", field, ErrSecretCommandRefused, srv.Source)
			}
			s, err := runSecretCommand(ctx, v[1:], srv.Cwd)
			if err != nil {
				return "", fmt.Errorf("%s: %w", field, err)
			}
			return s, nil
		}
		return v, nil
	}
	var err error
	if out.Env, err = resolveMap(srv.Env, "env", resolve); err != nil {
		return nil, err
	}
	if out.Headers, err = resolveMap(srv.Headers, "headers", resolve); err != nil {
		return nil, err
	}
	if x := srv.TokenExchange; x != nil && strings.HasPrefix(x.ClientSecret, "!") {
		cp := *x
		if cp.ClientSecret, err = resolve("tokenExchange.clientSecret", x.ClientSecret); err != nil {
			return nil, err
		}
		out.TokenExchange = &cp
	}
	if srv.BearerToken != "" {
		if out.BearerToken, err = resolve("bearerToken", srv.BearerToken); err != nil {
			return nil, err
		}
	} else if srv.BearerTokenEnv != "" && !registry.IsOwnVar(srv.BearerTokenEnv) {
		// Never mcpgw's own variables: the daemon's token is not an upstream's.
		out.BearerToken, _ = p.getenv(srv.BearerTokenEnv)
	}
	return &out, nil
}

func resolveMap(m map[string]string, field string, resolve func(field, v string) (string, error)) (map[string]string, error) {
	var out map[string]string
	for k, v := range m {
		if !strings.HasPrefix(v, "!") {
			continue
		}
		r, err := resolve(field+"."+k, v)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = make(map[string]string, len(m))
			for k2, v2 := range m {
				out[k2] = v2
			}
		}
		out[k] = r
	}
	if out == nil {
		return m, nil
	}
	return out, nil
}

// shellSyntax are the characters that make a secret command need a shell.
const shellSyntax = "|&;<>()$`\\\"'*?[]#~=%{}\n"

// runSecretCommand runs line and returns its standard output without
// trailing newlines. A line without shell syntax is split on spaces and run
// directly; otherwise it runs under /bin/sh -c.
func runSecretCommand(ctx context.Context, line, dir string) (string, error) {
	line = strings.TrimSpace(line)
	if line == "" {
		return "", errors.New(`"!" is followed by no command`)
	}
	ctx, cancel := context.WithTimeout(ctx, secretCommandTimeout)
	defer cancel()
	var cmd *exec.Cmd
	if strings.ContainsAny(line, shellSyntax) {
		cmd = exec.CommandContext(ctx, "/bin/sh", "-c", line)
	} else {
		f := strings.FieldsFunc(line, unicode.IsSpace)
		cmd = exec.CommandContext(ctx, f[0], f[1:]...)
	}
	if dir != "" {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			cmd.Dir = dir
		}
	}
	cmd.Env = registry.WithoutOwnVars(os.Environ()) // the daemon's token is not the command's
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	name := strings.Fields(line)[0]
	if err := cmd.Run(); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("timed out after %v", secretCommandTimeout)
		}
		msg := fmt.Sprintf("secret command %s: %v", name, err)
		if s := strings.TrimSpace(lastBytes(stderr.String(), 512)); s != "" {
			msg += ": " + s
		}
		return "", errors.New(msg)
	}
	return strings.TrimRight(stdout.String(), "\r\n"), nil
}

func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
