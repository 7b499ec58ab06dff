//go:build linux

package torture

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

// envUpstream, set in the environment of this test binary, makes it serve
// the hostile upstream on stdin/stdout instead of running tests. Its value
// is the upstream's behaviour at start:
//
//   - "plain": a well-behaved server;
//   - "garbage": writes a line that is not JSON-RPC before every response;
//   - "initexit": writes to stderr and exits on initialize;
//   - "stubborn": ignores SIGTERM and the end of its stdin.
//
// Tools, whatever the mode: echo {message}, crash (exits mid-call), hang
// (never answers), huge {mb} (a result of that many MB), flood {mb}
// (writes that many MB to stderr, then answers), spawn (starts a sleeping
// grandchild in a session of its own and returns its PID), pid.
const envUpstream = "MCPGW_TORTURE_UPSTREAM"

// envPIDFile names a file each upstream process appends its PID to.
const envPIDFile = "MCPGW_TORTURE_PIDS"

type rpcMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

func serveHostile(mode string) {
	if path := os.Getenv(envPIDFile); path != "" {
		if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			fmt.Fprintln(f, os.Getpid())
			f.Close()
		}
	}
	if mode == "stubborn" {
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	}
	out := bufio.NewWriter(os.Stdout)
	respond := func(id json.RawMessage, result any) {
		if mode == "garbage" {
			out.WriteString("this is not JSON-RPC\n{\n")
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	text := func(s string) map[string]any {
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			if mode == "stubborn" {
				select {} // outlives its stdin; only SIGKILL ends it
			}
			return
		}
		var m rpcMessage
		if json.Unmarshal(line, &m) != nil || m.ID == nil {
			continue // notifications and anything else
		}
		switch m.Method {
		case "initialize":
			if mode == "initexit" {
				fmt.Fprintln(os.Stderr, "hostile: giving up during initialize")
				os.Exit(2)
			}
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = json.Unmarshal(m.Params, &p)
			respond(m.ID, map[string]any{
				"protocolVersion": p.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "hostile", "version": "1"},
			})
		case "ping":
			respond(m.ID, map[string]any{})
		case "tools/list":
			var tools []any
			for _, name := range []string{"echo", "crash", "hang", "huge", "flood", "spawn", "pid"} {
				tools = append(tools, map[string]any{"name": name, "description": "hostile " + name,
					"inputSchema": map[string]any{"type": "object"}})
			}
			respond(m.ID, map[string]any{"tools": tools})
		case "tools/call":
			var p struct {
				Name      string `json:"name"`
				Arguments struct {
					Message string `json:"message"`
					MB      int    `json:"mb"`
				} `json:"arguments"`
			}
			_ = json.Unmarshal(m.Params, &p)
			switch p.Name {
			case "echo":
				respond(m.ID, text(p.Arguments.Message))
			case "crash":
				fmt.Fprintln(os.Stderr, "hostile: crashing mid-call")
				os.Exit(3)
			case "hang":
			case "huge":
				// Written as it goes, as a real server's big result is.
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, m.ID)
				chunk := strings.Repeat("x", 1<<20)
				for range p.Arguments.MB {
					out.WriteString(chunk)
				}
				out.WriteString("\"}]}}\n")
				out.Flush()
			case "flood":
				chunk := strings.Repeat("stderr flood line\n", 1<<16)
				for range p.Arguments.MB {
					os.Stderr.WriteString(chunk)
				}
				respond(m.ID, text("flooded"))
			case "spawn":
				cmd := exec.Command("sleep", "3600")
				cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
				if err := cmd.Start(); err != nil {
					respond(m.ID, text("spawn: "+err.Error()))
					continue
				}
				respond(m.ID, text(strconv.Itoa(cmd.Process.Pid)))
			case "pid":
				respond(m.ID, text(strconv.Itoa(os.Getpid())))
			}
		default:
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID,
				"error": map[string]any{"code": -32601, "message": "method not found"}})
			out.Write(b)
			out.WriteByte('\n')
			out.Flush()
		}
	}
}
