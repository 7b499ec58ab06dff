package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/gateway"
)

// Commands that talk to a running daemon over its HTTP listener.

func daemonURLDefault() string {
	if u := os.Getenv("MCPGW_URL"); u != "" {
		return strings.TrimRight(u, "/")
	}
	return "http://" + defaultListen()
}

type clientFlags struct {
	url   string
	token string
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.url, "url", daemonURLDefault(), "the daemon's base URL (default $MCPGW_URL or http://"+deploy.DefaultListen+")")
	fs.StringVar(&c.token, "token", os.Getenv("MCPGW_TOKEN"), "bearer token (default $MCPGW_TOKEN)")
}

func (c *clientFlags) do(ctx context.Context, method, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.url, "/")+path, nil)
	if err != nil {
		return nil, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("no mcpgw daemon answers at %s (%v); start one with `mcpgw serve`", c.url, err)
	}
	return resp, nil
}

func statusCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c clientFlags
	c.register(fs)
	asJSON := fs.Bool("json", false, "print the raw JSON report")
	if err := fs.Parse(args); err != nil {
		return err
	}
	resp, err := c.do(ctx, http.MethodGet, "/-/status")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	if *asJSON {
		_, err := stdout.Write(body)
		return err
	}
	var r gateway.Report
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("decoding status: %w", err)
	}
	renderStatus(stdout, &r, time.Now())
	return nil
}

// renderStatus prints a Report as a person reads it: a header, then a table
// of servers.
func renderStatus(w io.Writer, r *gateway.Report, now time.Time) {
	connected := 0
	for _, s := range r.Servers {
		if s.State == "connected" {
			connected++
		}
	}
	fmt.Fprintf(w, "mcpgw %s, pid %d, up %s, %d session%s, %d/%d servers connected, %d tools\n",
		r.Version, r.PID, since(now, r.StartedAt), r.Sessions, plural(r.Sessions), connected, len(r.Servers), r.Tools)
	cfg := tildePath(r.Config)
	if cfg == "" {
		cfg = "(none)"
	}
	fmt.Fprintf(w, "config: %s", cfg)
	if rl := r.LastReload; rl != nil {
		if rl.OK {
			fmt.Fprintf(w, " (reloaded %s ago)", since(now, rl.At))
		} else {
			fmt.Fprintf(w, " (reload FAILED %s ago, running the last good config: %s)", since(now, rl.At), rl.Error)
		}
	}
	fmt.Fprintln(w)
	if r.Cache != "" {
		fmt.Fprintf(w, "cache:  %s\n", tildePath(r.Cache))
	}
	if len(r.Servers) == 0 {
		fmt.Fprintln(w, "\nNo servers configured.")
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATE\tTOOLS\tCALLS\tERRORS\tLAST ERROR\tSOURCE")
	for _, s := range r.Servers {
		state := s.State
		switch {
		case s.State == "connected" && s.PID != 0:
			state += fmt.Sprintf(" (pid %d)", s.PID)
		case s.State == "failed" && !s.NextRetry.IsZero() && s.NextRetry.After(now):
			state += ", retry in " + since(s.NextRetry, now)
		}
		if s.Upstream != "" && s.Upstream != s.Name {
			state += ", same as " + s.Upstream
		}
		lastErr := s.LastError
		if lastErr == "" {
			lastErr = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", s.Name, state, s.Tools, s.Calls, s.Errors,
			clip(firstLine(lastErr), 50), tildePath(s.Source))
	}
	tw.Flush()
}

// tildePath writes the home directory as ~, as people do.
func tildePath(p string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		return p
	}
	if p == home {
		return "~"
	}
	if rest, ok := strings.CutPrefix(p, home+"/"); ok {
		return "~/" + rest
	}
	return p
}

func since(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case t.IsZero():
		return "-"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func reloadCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c clientFlags
	c.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	resp, err := c.do(ctx, http.MethodPost, "/-/reload")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("reload: %s", strings.TrimSpace(string(body)))
	}
	_, err = stdout.Write(body)
	return err
}

// proxyCmd runs one `mcp` tool call against the daemon and prints its text:
// `mcpgw tools`, `search`, `call` and `connect` are thin wrappers over the
// same tool the model uses, so they show exactly what the model would see.
func proxyCmd(ctx context.Context, name string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c clientFlags
	c.register(fs)
	server := fs.String("server", "", "only this server")
	regex := fs.Bool("regex", false, "search: treat the words as a regular expression")
	schemas := fs.Bool("schemas", false, "search: include parameters")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rest := fs.Args()
	callArgs := map[string]any{}
	switch name {
	case "tools":
		if *server != "" {
			callArgs["server"] = *server
		}
	case "search":
		if len(rest) == 0 {
			return errors.New("usage: mcpgw search [--server S] WORDS")
		}
		callArgs["search"] = strings.Join(rest, " ")
		if *server != "" {
			callArgs["server"] = *server
		}
		callArgs["regex"], callArgs["includeSchemas"] = *regex, *schemas
	case "call":
		if len(rest) == 0 || len(rest) > 2 {
			return errors.New(`usage: mcpgw call TOOL ['{"arg": "value"}']`)
		}
		callArgs["tool"] = rest[0]
		if len(rest) == 2 {
			var a map[string]any
			if err := json.Unmarshal([]byte(rest[1]), &a); err != nil {
				return fmt.Errorf("arguments must be a JSON object: %w", err)
			}
			callArgs["args"] = a
		}
	case "connect":
		if len(rest) != 1 {
			return errors.New("usage: mcpgw connect SERVER")
		}
		callArgs["connect"] = rest[0]
	case "describe":
		if len(rest) != 1 {
			return errors.New("usage: mcpgw describe TOOL")
		}
		callArgs["describe"] = rest[0]
	}
	res, err := callProxy(ctx, &c, callArgs)
	if err != nil {
		return err
	}
	for _, content := range res.Content {
		switch ct := content.(type) {
		case *mcp.TextContent:
			fmt.Fprintln(stdout, ct.Text)
		case *mcp.ImageContent:
			fmt.Fprintf(stdout, "[image: %s, %d bytes]\n", ct.MIMEType, len(ct.Data))
		default:
			data, _ := json.Marshal(ct)
			fmt.Fprintln(stdout, string(data))
		}
	}
	if res.IsError {
		return errors.New("the call returned an error")
	}
	return nil
}

func callProxy(ctx context.Context, c *clientFlags, args map[string]any) (*mcp.CallToolResult, error) {
	httpClient := &http.Client{}
	if c.token != "" {
		httpClient.Transport = bearerTransport{token: c.token}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpgw-cli", Version: version}, nil)
	sess, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             strings.TrimRight(c.url, "/") + "/mcp",
		HTTPClient:           httpClient,
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return nil, fmt.Errorf("no mcpgw daemon answers at %s (%v); start one with `mcpgw serve`", c.url, err)
	}
	defer sess.Close()
	return sess.CallTool(ctx, &mcp.CallToolParams{Name: "mcp", Arguments: args})
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
