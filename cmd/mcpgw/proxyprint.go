package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/control"
)

// How the CLI's commands that talk to a daemon turn what they say into
// the mcp tool's arguments, and print what comes back.

// proxyFlags are the options of the CLI's `mcp` tool commands.
type proxyFlags struct {
	Server  string // only this server (tools, search)
	Regex   bool   // search: the words are a regular expression
	Schemas bool   // search: include parameters
	// script: the code, and its deadline (0: the daemon's default)
	Code    string
	Timeout time.Duration
}

// proxyArgs turns a CLI command (tools, search, call, connect, describe)
// and its arguments into the `mcp` tool's arguments, so that the command
// shows exactly what the model would see.
func proxyArgs(command string, rest []string, f proxyFlags) (map[string]any, error) {
	args := map[string]any{}
	one := func(key, usage string) error {
		if len(rest) != 1 {
			return errors.New("usage: " + usage)
		}
		args[key] = rest[0]
		return nil
	}
	switch command {
	case "tools":
		if f.Server != "" {
			args["server"] = f.Server
		}
	case "search":
		if len(rest) == 0 {
			return nil, errors.New("usage: mcpgw search [--server S] WORDS")
		}
		args["search"] = strings.Join(rest, " ")
		if f.Server != "" {
			args["server"] = f.Server
		}
		args["regex"], args["includeSchemas"] = f.Regex, f.Schemas
	case "call":
		if len(rest) == 0 || len(rest) > 2 {
			return nil, errors.New(`usage: mcpgw call TOOL ['{"arg": "value"}']`)
		}
		args["tool"] = rest[0]
		if len(rest) == 2 {
			var a map[string]any
			if err := json.Unmarshal([]byte(rest[1]), &a); err != nil {
				return nil, fmt.Errorf("arguments must be a JSON object: %w", err)
			}
			args["args"] = a
		}
	case "script":
		if f.Code == "" {
			return nil, errors.New("usage: mcpgw script [-e CODE | FILE | -] [--timeout 30s]")
		}
		args["script"] = f.Code
		if f.Timeout > 0 {
			args["timeoutMs"] = f.Timeout.Milliseconds()
		}
	case "connect":
		return args, one("connect", "mcpgw connect SERVER")
	case "describe":
		return args, one("describe", "mcpgw describe TOOL")
	}
	return args, nil
}

// resultText is the text contents of a tool result, joined by spaces.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}

// writeResult prints a tool result for a person: text as it is, other
// content summarised or as JSON.
func writeResult(w io.Writer, res *mcp.CallToolResult) {
	for _, content := range res.Content {
		switch ct := content.(type) {
		case *mcp.TextContent:
			fmt.Fprintln(w, lines(ct.Text))
		case *mcp.ImageContent:
			fmt.Fprintf(w, "[image: %s, %d bytes]\n", oneLine(ct.MIMEType), len(ct.Data))
		default:
			data, _ := json.Marshal(ct)
			fmt.Fprintln(w, oneLine(string(data)))
		}
	}
}

// printLogs writes the daemon's recent lines about server to w; with
// follow, it then polls once a second and writes the new ones, until ctx
// ends.
func printLogs(ctx context.Context, c *control.Control, w io.Writer, server string, follow bool) error {
	var last []string
	for {
		got, err := c.Logs(ctx, server)
		if err != nil {
			return err
		}
		for _, l := range newLines(last, got) {
			fmt.Fprintln(w, oneLine(l))
		}
		last = got
		if !follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

// newLines returns the lines of cur after what prev already showed: log
// buffers are rings, whose old lines fall off the front.
func newLines(prev, cur []string) []string {
	if len(prev) == 0 {
		return cur
	}
	// The longest suffix of prev that starts cur.
	for k := min(len(prev), len(cur)); k > 0; k-- {
		if slices.Equal(prev[len(prev)-k:], cur[:k]) {
			return cur[k:]
		}
	}
	return cur
}
