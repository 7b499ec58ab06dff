package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/registry"
)

// A client that probes with server/discover and, its probe unanswered in
// time (a daemon still starting), falls back to initialize sends both
// before either is answered. The session then speaks the era of whichever
// the daemon took first, and only that one: the probe answered and the
// initialize refused, or the initialize answered and the probe refused,
// never both. Both answered, the client speaks 2025-11-25 to a session
// that took it for 2026-07-28, and its approval comes back as an
// input_required result its older protocol does not have. The go-sdk
// handles server/discover concurrently with the initialize after it, so
// this is run many times.
func TestProbeThenInitializeKeepOneEra(t *testing.T) {
	t.Parallel()
	gw := newPolicyGateway(t, registry.Settings{ApproveTools: destructive, ApprovalTimeout: time.Minute}, "")
	probe := with2026Meta(t, `{"jsonrpc":"2.0","id":"probe","method":"server/discover","params":{}}`)
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"raw","version":"1"}}}`

	// The probe handled after the initialize, in order.
	c := openRawShim(t, gw)
	c.write(initialize)
	if res := c.answers(`0`)[`0`]; !strings.Contains(string(res.Result), `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize answered %s", res.raw)
	}
	c.write(probe)
	if res := c.answers(`"probe"`)[`"probe"`]; !strings.Contains(string(res.Error), `"code":-32601`) {
		t.Fatalf("a probe after the initialize was answered %s, want method not found", res.raw)
	}
	c.declinedByRequest(t)
	c.close()

	// Sent together: either, never both.
	var legacy, modern int
	for i := 0; i < 60; i++ {
		c := openRawShim(t, gw)
		c.write(probe + "\n" + initialize)
		answers := c.answers(`"probe"`, `0`)
		probeOK := answers[`"probe"`].Error == nil
		initOK := answers[`0`].Error == nil
		switch {
		case probeOK && initOK:
			t.Fatalf("run %d: both the probe and the initialize were answered: %s / %s", i, answers[`"probe"`].raw, answers[`0`].raw)
		case !probeOK && !initOK:
			t.Fatalf("run %d: neither the probe nor the initialize was answered: %s / %s", i, answers[`"probe"`].raw, answers[`0`].raw)
		case probeOK:
			modern++
		default:
			legacy++
			c.declinedByRequest(t)
		}
		c.close()
	}
	t.Logf("%d sessions took the probe, %d the initialize", modern, legacy)
}

// declinedByRequest checks that the session, initialized in 2025-11-25,
// asks for an approval as that protocol does, by request, and answers
// the declined call complete, with content, and without a resultType.
func (c *rawShim) declinedByRequest(t *testing.T) {
	t.Helper()
	c.write(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp","arguments":{"tool":"p_delete_thing","args":{"name":"x"}}}}`)
	req := c.next()
	if req.Method != "elicitation/create" {
		t.Fatalf("a 2025-11-25 session's approval was asked with %s", req.raw)
	}
	c.write(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"action":"decline"}}`)
	res := c.answers(`1`)[`1`]
	if !strings.Contains(string(res.Result), "The user denied the call of delete_thing") || strings.Contains(string(res.Result), "resultType") {
		t.Fatalf("the declined call answered %s", res.raw)
	}
}

// rawShim is a shim connection of gw read and written line by line.
type rawShim struct {
	t      testing.TB
	conn   net.Conn
	br     *bufio.Reader
	cancel context.CancelFunc
	done   chan struct{}
}

type rawMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	raw    []byte
}

func openRawShim(t testing.TB, gw *Hub) *rawShim {
	t.Helper()
	client, daemon := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	c := &rawShim{t: t, conn: client, br: bufio.NewReaderSize(client, 1<<20), cancel: cancel, done: make(chan struct{})}
	go func() { defer close(c.done); _ = gw.transports.ServeShim(ctx, daemon) }()
	t.Cleanup(c.close)
	c.write(`{"mcpgw":1,"version":"test"}`)
	if line, err := c.br.ReadString('\n'); err != nil || !strings.Contains(line, `"ok":true`) {
		t.Fatalf("handshake: %q, %v", line, err)
	}
	return c
}

// write sends lines, all in one write.
func (c *rawShim) write(lines string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, lines+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// next reads the next message.
func (c *rawShim) next() rawMessage {
	c.t.Helper()
	line, err := c.br.ReadBytes('\n')
	if err != nil {
		c.t.Fatalf("reading: %v", err)
	}
	var m rawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		c.t.Fatalf("not JSON: %s", line)
	}
	m.raw = line
	return m
}

// answers reads until every one of ids (as written) is answered; other
// messages are dropped.
func (c *rawShim) answers(ids ...string) map[string]rawMessage {
	c.t.Helper()
	got := map[string]rawMessage{}
	for len(got) < len(ids) {
		m := c.next()
		if m.Method != "" {
			continue
		}
		for _, id := range ids {
			if string(m.ID) == id {
				got[id] = m
			}
		}
	}
	return got
}

func (c *rawShim) close() {
	c.conn.Close()
	c.cancel()
	<-c.done
}
