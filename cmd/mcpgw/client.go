package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/internal/control"
)

// Commands that talk to a running daemon over its HTTP listener.

func daemonURLDefault() string {
	if u := os.Getenv("MCPGW_URL"); u != "" {
		return strings.TrimRight(u, "/")
	}
	return "http://" + defaultListen()
}

type clientFlags struct {
	url       string
	urlSet    bool // --url was given
	socket    string
	tokenFile string
	tokenArg  bool // --token was given: refused
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	c.url = daemonURLDefault()
	fs.Var(setFlag{&c.url, &c.urlSet}, "url", "the daemon's base URL ($MCPGW_URL, else http://"+deploy.DefaultListen+"); given either way, the socket is not tried")
	fs.StringVar(&c.socket, "socket", deploy.DefaultSocket(), "the daemon's unix socket, tried before the URL (the daemon serves the CLI there too)")
	fs.StringVar(&c.tokenFile, "token-file", "", "read the daemon's bearer token from `FILE` (default $MCPGW_TOKEN, now "+setOrUnset(os.Getenv("MCPGW_TOKEN"))+", else the install token, "+deploy.TokenPath()+", if there is one)")
	fs.Var(refusedFlag{&c.tokenArg}, "token", "not accepted: a token in the arguments is readable by every local user; use --token-file or $MCPGW_TOKEN")
}

// setFlag is a string flag that notes whether it was given.
type setFlag struct {
	s   *string
	set *bool
}

func (f setFlag) String() string {
	if f.s == nil {
		return ""
	}
	return *f.s
}

func (f setFlag) Set(v string) error {
	*f.s, *f.set = v, true
	return nil
}

// refusedFlag is a flag that is refused after parsing (its value is
// never printed, as an error from Set would be).
type refusedFlag struct{ given *bool }

func (f refusedFlag) String() string { return "" }

func (f refusedFlag) Set(string) error {
	*f.given = true
	return nil
}

// token is the daemon's bearer token as the flags find it: --token-file,
// else $MCPGW_TOKEN, else the install token a daemon that cannot check
// its clients' owner made; "" for none.
func (c *clientFlags) token() (string, error) {
	if c.tokenArg {
		return "", deploy.ErrTokenArg
	}
	if c.tokenFile != "" {
		tok, err := deploy.ReadToken(c.tokenFile)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		return tok, nil
	}
	if tok := os.Getenv("MCPGW_TOKEN"); tok != "" {
		return tok, nil
	}
	tok, _ := deploy.ReadToken(deploy.TokenPath())
	return tok, nil
}

func setOrUnset(s string) string {
	if s == "" {
		return "unset"
	}
	return "set"
}

// control is the client of the daemon the flags name.
func (c *clientFlags) control() (*control.Control, error) {
	tok, err := c.token()
	if err != nil {
		return nil, err
	}
	ctl := &control.Control{URL: c.url, Token: tok, Version: version}
	if !c.urlSet && os.Getenv("MCPGW_URL") == "" {
		// The daemon of this user answers there, whether or not it has
		// its TCP port (another program may).
		ctl.Socket = c.socket
	}
	return ctl, nil
}

func statusCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("status", stderr)
	var c clientFlags
	c.register(fs)
	asJSON := fs.Bool("json", false, "print the raw JSON report")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctl, err := c.control()
	if err != nil {
		return err
	}
	body, err := ctl.Status(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		_, err := io.WriteString(stdout, lines(string(body)))
		return err
	}
	var r api.Report
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("decoding status: %w", err)
	}
	writeStatus(stdout, &r, time.Now())
	return nil
}

func reloadCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("reload", stderr)
	var c clientFlags
	c.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctl, err := c.control()
	if err != nil {
		return err
	}
	answer, err := ctl.Reload(ctx)
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, lines(answer))
	return err
}

// proxyCmd runs one `mcp` tool call against the daemon and prints its text:
// `mcpgw tools`, `search`, `call` and `connect` are thin wrappers over the
// same tool the model uses, so they show exactly what the model would see.
func proxyCmd(ctx context.Context, name string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet(name, stderr)
	var c clientFlags
	c.register(fs)
	server := fs.String("server", "", "only this server")
	regex := fs.Bool("regex", false, "search: treat the words as a regular expression")
	schemas := fs.Bool("schemas", false, "search: include parameters")
	var code string
	var timeout time.Duration
	if name == "script" {
		fs.StringVar(&code, "e", "", "the script's code")
		fs.DurationVar(&timeout, "timeout", 0, "the script's deadline (default: the daemon's, 30s; at most 5m)")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	rest := fs.Args()
	if name == "script" && len(rest) > 1 {
		// Flags after the file: mcpgw script report.js --timeout 2m.
		file := rest[0]
		if err := fs.Parse(rest[1:]); err != nil {
			return err
		}
		rest = append([]string{file}, fs.Args()...)
	}
	if name == "script" && code == "" && len(rest) == 1 {
		src, err := readScript(rest[0], stdin)
		if err != nil {
			return err
		}
		code, rest = src, nil
	}
	if name == "script" && len(rest) > 0 {
		return errors.New("usage: mcpgw script [-e CODE | FILE | -] [--timeout 30s]")
	}
	callArgs, err := proxyArgs(name, rest, proxyFlags{Server: *server, Regex: *regex, Schemas: *schemas, Code: code, Timeout: timeout})
	if err != nil {
		return err
	}
	ctl, err := c.control()
	if err != nil {
		return err
	}
	res, err := ctl.Proxy(ctx, callArgs, func(p api.PendingApproval) {
		fmt.Fprintf(stderr, "mcpgw: %s on %s waits for your approval (%s) until %s:\n  mcpgw approve %s    (or --deny, or on the status page)\n",
			oneLine(p.Tool), oneLine(p.Server), oneLine(p.Rule), p.Deadline.Local().Format(time.TimeOnly), oneLine(p.ID))
	})
	if err != nil {
		return err
	}
	if name == "script" {
		indentJSON(res)
	}
	writeResult(stdout, res)
	if res.IsError {
		return errors.New("the call returned an error")
	}
	return nil
}

// indentJSON indents a script's answer (one JSON object) for a person.
func indentJSON(res *mcp.CallToolResult) {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			var b bytes.Buffer
			if json.Indent(&b, []byte(t.Text), "", "  ") == nil {
				t.Text = b.String()
			}
		}
	}
}

// readScript reads a script from a file, or from stdin for "-".
func readScript(name string, stdin io.Reader) (string, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return "", fmt.Errorf("reading the script: %w", err)
	}
	return string(data), nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
