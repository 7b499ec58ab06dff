// Package control is the client of a running daemon's HTTP control API,
// as the CLI uses it: the status report, reload, a server's log lines,
// pending approvals, and the mcp tool. It returns data; the CLI prints.
package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/gateway/api"
)

// Control is a client of one running daemon. Its methods may be called
// from several goroutines.
type Control struct {
	URL     string // the daemon's base URL, e.g. http://127.0.0.1:7332
	Token   string // its bearer token, if it has one
	Version string // the client's version, told to the daemon
	// Socket, when set, is the daemon's unix socket, tried before URL:
	// the daemon serves its HTTP API there too, so the CLI reaches it
	// whatever became of its TCP port, and never takes another program on
	// that port for it.
	Socket string

	once  sync.Once
	route route
}

// route is how the daemon is reached: base URL and client, or why it is
// not.
type route struct {
	base   string
	client *http.Client
	err    error
}

// socketBase is the base URL of requests on the socket (the Host the
// daemon's DNS-rebinding check accepts).
const socketBase = "http://localhost"

// versionHeader is on every answer of an mcpgw daemon (its version):
// what answers without it is another program.
const versionHeader = "Mcpgw-Version"

// ViaSocket reports whether the daemon answers on its unix socket (rather
// than at URL).
func (c *Control) ViaSocket(ctx context.Context) bool {
	r := c.resolve(ctx)
	return r.err == nil && r.base == socketBase
}

// resolve finds the daemon once: on the socket if one answers there as
// mcpgw, else at URL, if what answers there is mcpgw.
func (c *Control) resolve(ctx context.Context) route {
	c.once.Do(func() {
		var sockErr error
		if c.Socket != "" {
			if sockErr = deploy.CheckSocketOwner(c.Socket); sockErr == nil {
				sock := c.Socket
				client := &http.Client{Transport: &http.Transport{
					DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
						var d net.Dialer
						return d.DialContext(ctx, "unix", sock)
					},
				}}
				if sockErr = probe(ctx, client, socketBase); sockErr == nil {
					c.route = route{base: socketBase, client: client}
					return
				}
			}
		}
		base := strings.TrimRight(c.URL, "/")
		c.route = route{base: base, client: http.DefaultClient}
		var nm *notMcpgw
		switch err := probe(ctx, http.DefaultClient, base); {
		case errors.As(err, &nm) && c.Socket != "":
			c.route.err = fmt.Errorf("no mcpgw daemon answers on %s (%s), and what answers at %s is not one: %w; start one with `mcpgw serve`", c.Socket, socketProblem(sockErr), c.URL, err)
		case errors.As(err, &nm):
			c.route.err = fmt.Errorf("what answers at %s is not an mcpgw daemon: %w", c.URL, err)
		case err != nil && c.Socket != "":
			c.route.err = fmt.Errorf("no mcpgw daemon answers on %s (%s) nor at %s (%v); start one with `mcpgw serve`", c.Socket, socketProblem(sockErr), c.URL, err)
		case err != nil:
			c.route.err = c.unreachable(err)
		}
	})
	return c.route
}

// socketProblem says in a few words why the socket did not answer.
func socketProblem(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such socket"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "nothing listens on it"
	}
	return err.Error()
}

// notMcpgw is the answer of a program that is not mcpgw.
type notMcpgw struct{ status string }

func (e *notMcpgw) Error() string {
	return fmt.Sprintf("it answered %s, without mcpgw's Mcpgw-Version header (an mcpgw older than this CLI would too: restart it)", e.status)
}

// probe asks base's /healthz whether an mcpgw daemon answers there.
func probe(ctx context.Context, client *http.Client, base string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.Header.Get(versionHeader) == "" {
		// Another program's answer: never shown as mcpgw's.
		return &notMcpgw{resp.Status}
	}
	return nil
}

// request makes a request of the control API; an error names the daemon
// that does not answer.
func (c *Control) request(ctx context.Context, method, path string) (body []byte, status int, err error) {
	return c.send(ctx, method, path, nil)
}

// send makes a request of the control API with a JSON body (nil for none).
func (c *Control) send(ctx context.Context, method, path string, in []byte) (body []byte, status int, err error) {
	r := c.resolve(ctx)
	if r.err != nil {
		return nil, 0, r.err
	}
	var rd io.Reader
	if in != nil {
		rd = bytes.NewReader(in)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, rd)
	if err != nil {
		return nil, 0, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, 0, c.unreachable(err)
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	return body, resp.StatusCode, err
}

func (c *Control) unreachable(err error) error {
	return fmt.Errorf("no mcpgw daemon answers at %s (%v); start one with `mcpgw serve`", c.URL, err)
}

// Status returns the daemon's status report as the JSON it sent.
func (c *Control) Status(ctx context.Context) ([]byte, error) {
	body, status, err := c.request(ctx, http.MethodGet, "/-/status")
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("status: %s: %s", http.StatusText(status), strings.TrimSpace(string(body)))
	}
	return body, nil
}

// Reload asks the daemon to read its configuration again; the answer says
// what happened.
func (c *Control) Reload(ctx context.Context) (string, error) {
	body, status, err := c.request(ctx, http.MethodPost, "/-/reload")
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", fmt.Errorf("reload: %s", strings.TrimSpace(string(body)))
	}
	return string(body), nil
}

// Logs returns the daemon's recent log lines about a server, its stderr
// included.
func (c *Control) Logs(ctx context.Context, server string) ([]string, error) {
	body, status, err := c.request(ctx, http.MethodGet, "/-/logs?server="+url.QueryEscape(server))
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("logs: %s", strings.TrimSpace(string(body)))
	}
	text := strings.TrimRight(string(body), "\n")
	if text == "" {
		return nil, nil
	}
	return strings.Split(text, "\n"), nil
}

// Proxy calls the mcp tool with args in a session of its own (proxy mode,
// whatever the configuration's mode), so that the CLI shows what the
// model would see. If the call waits for the user's approval (the CLI's
// session cannot be asked), waiting is told of it, once.
func (c *Control) Proxy(ctx context.Context, args map[string]any, waiting func(api.PendingApproval)) (*mcp.CallToolResult, error) {
	r := c.resolve(ctx)
	if r.err != nil {
		return nil, r.err
	}
	httpClient := &http.Client{Transport: r.client.Transport}
	if c.Token != "" {
		httpClient.Transport = bearerTransport{token: c.Token, next: r.client.Transport}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpgw-cli", Version: c.Version}, nil)
	sess, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             r.base + "/mcp?mode=proxy",
		HTTPClient:           httpClient,
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return nil, c.unreachable(err)
	}
	defer sess.Close()
	if waiting != nil {
		stop := make(chan struct{})
		defer close(stop)
		go c.watchApprovals(ctx, sess.ID(), waiting, stop)
	}
	return sess.CallTool(ctx, &mcp.CallToolParams{Name: "mcp", Arguments: args})
}

// watchApprovals polls the pending approvals until one of session's
// appears (then tells waiting), or until stop.
func (c *Control) watchApprovals(ctx context.Context, session string, waiting func(api.PendingApproval), stop <-chan struct{}) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		list, err := c.Approvals(ctx)
		if err != nil {
			continue
		}
		for _, p := range list {
			if p.Session == session {
				waiting(p)
				return
			}
		}
	}
}

type bearerTransport struct {
	token string
	next  http.RoundTripper // nil: http.DefaultTransport
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	next := b.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

// Healthz asks the daemon's /healthz and returns "URL: answer"; an error
// when it does not answer 200 OK.
func (c *Control) Healthz(ctx context.Context) (string, error) {
	target := strings.TrimRight(c.URL, "/") + "/healthz"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("checking %s: %w", target, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("checking %s: %s: %s", target, resp.Status, strings.TrimSpace(string(body)))
	}
	return target + ": " + strings.TrimSpace(string(body)), nil
}

// Approvals returns the calls waiting for the user's approval.
func (c *Control) Approvals(ctx context.Context) ([]api.PendingApproval, error) {
	body, status, err := c.request(ctx, http.MethodGet, "/-/approvals")
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("approvals: %s: %s", http.StatusText(status), strings.TrimSpace(string(body)))
	}
	var out []api.PendingApproval
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("decoding approvals: %w", err)
	}
	return out, nil
}

// Approve decides the pending approval id: once, tool, server (allow) or
// deny. The answer says what was decided.
func (c *Control) Approve(ctx context.Context, id, decision string) (string, error) {
	q := url.Values{"id": {id}, "decision": {decision}, "by": {"cli"}}
	body, status, err := c.request(ctx, http.MethodPost, "/-/approve?"+q.Encode())
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", errors.New(strings.TrimSpace(string(body)))
	}
	return strings.TrimSpace(string(body)), nil
}
