// Package fakeupstream provides a small, fast MCP server used as an upstream
// by mcpgw's tests and by `mcpgw bench proxy`. It runs in-process (NewServer,
// Handler), on stdin/stdout (ServeStdio) or over HTTP (ServeHTTP), and can be
// re-run from a test binary as a real stdio process (testmain.Run, Command).
//
// Tools: echo {message}, add {a,b}, sleep {ms}, fail {message} (an IsError
// result), crash (exits the process), pid, stderr {line}, image, env {name},
// cwd, spawn (starts a grandchild process and returns its PID) and add_tool
// {name} (adds an echo-like tool, which makes the server send
// notifications/tools/list_changed). Resources: test://hello, test://readme,
// test://data.json. Prompt: greet {name}.
package fakeupstream

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Environment variables read by ServeStdio.
const (
	// EnvPIDFile names a file ServeStdio appends its PID to (one per line),
	// so tests can count process starts.
	EnvPIDFile = "MCPGW_TESTSERVER_PIDFILE"
	// EnvPageSize sets Options.PageSize.
	EnvPageSize = "MCPGW_TESTSERVER_PAGESIZE"
	// EnvInstructions sets Options.Instructions.
	EnvInstructions = "MCPGW_TESTSERVER_INSTRUCTIONS"
	// EnvStartDelay makes ServeStdio wait that many milliseconds before it
	// answers anything, like a server that is slow to start.
	EnvStartDelay = "MCPGW_TESTSERVER_START_DELAY_MS"
	// EnvStartGate makes ServeStdio wait until the file it names exists
	// before it answers anything: a start that ends when a test says.
	EnvStartGate = "MCPGW_TESTSERVER_START_GATE"
	// EnvFailStart makes ServeStdio write its value to stderr and exit 1,
	// like a server missing its token.
	EnvFailStart = "MCPGW_TESTSERVER_FAIL_START"
	// EnvProtocols sets Options.Protocols, comma-separated.
	EnvProtocols = "MCPGW_TESTSERVER_PROTOCOLS"
	// EnvPolicy, set to 1, sets Options.Policy.
	EnvPolicy = "MCPGW_TESTSERVER_POLICY"
	// EnvApps sets Options.Apps to its value.
	EnvApps = "MCPGW_TESTSERVER_APPS"
	// EnvLogRequests, set to 1, sets Options.LogRequests.
	EnvLogRequests = "MCPGW_TESTSERVER_LOG_REQUESTS"
)

// Options configures the test server. A nil *Options means defaults.
type Options struct {
	// Name is the implementation name sent in serverInfo (default "mcpgw-testserver").
	Name string
	// PageSize is the page size of tools/list, resources/list and
	// prompts/list (0 = the SDK default of 1000).
	PageSize int
	// Instructions are sent in the initialize result.
	Instructions string
	// Logger receives the SDK server's logs (nil = discard).
	Logger *slog.Logger
	// Policy adds the tools policy tests call (PolicyToolNames):
	// delete_thing (unannotated, so destructive by MCP's defaults; counts
	// its calls), read_thing (read-only), delete_count (how many
	// delete_thing calls arrived) and environ (the names of the process's
	// environment variables).
	Policy bool
	// Apps, when set, adds an MCP App: show_chart, whose UI is
	// ui://chart/app.html, and chart_points, for that app alone
	// (visibility ["app"]); the UI is readable through the template
	// ui://chart/{file}, not listed, and says Apps in its HTML.
	Apps string
	// LogRequests makes the server send a log message (info, its data
	// "served METHOD") for each prompts/get, resources/read and
	// completion/complete it answers, before the answer.
	LogRequests bool
	// Exit is called by the crash tool (nil = os.Exit). An in-process server
	// shared by tests should set it, or never be sent crash.
	Exit func(code int)
	// Protocols are the protocol versions the server speaks (nil = every
	// version the SDK does); e.g. "2025-11-25" alone makes it answer as a
	// server of the TypeScript SDK does today.
	Protocols []string
}

// OptionsFromEnv returns the Options the Env variables above set.
func OptionsFromEnv() (*Options, error) {
	opts := &Options{Instructions: os.Getenv(EnvInstructions), Policy: os.Getenv(EnvPolicy) == "1", Apps: os.Getenv(EnvApps),
		LogRequests: os.Getenv(EnvLogRequests) == "1"}
	if v := os.Getenv(EnvPageSize); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %w", EnvPageSize, err)
		}
		opts.PageSize = n
	}
	if v := os.Getenv(EnvProtocols); v != "" {
		opts.Protocols = strings.Split(v, ",")
	}
	return opts, nil
}

// TinyPNG is the image returned by the image tool: a 1×1 transparent PNG.
var TinyPNG, _ = base64.StdEncoding.DecodeString(
	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")

// ToolNames lists the tools NewServer registers, in registration order.
var ToolNames = []string{"echo", "add", "sleep", "fail", "crash", "pid", "stderr", "image", "env", "cwd", "spawn", "add_tool", "log", "freeze", "touch", "subscriptions", "meta"}

// PolicyToolNames lists the tools Options.Policy adds.
var PolicyToolNames = []string{"delete_thing", "read_thing", "delete_count", "environ"}

// ResourceURIs lists the resources NewServer registers.
var ResourceURIs = []string{"test://hello", "test://readme", "test://data.json"}

type spawnArgs struct {
	Setsid bool `json:"setsid,omitempty"`
}

type uriArgs struct {
	URI string `json:"uri"`
}

type logArgs struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}

type messageArgs struct {
	Message string `json:"message" jsonschema:"the text to return"`
}

type addArgs struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

type sleepArgs struct {
	MS int `json:"ms" jsonschema:"milliseconds to sleep"`
}

type lineArgs struct {
	Line string `json:"line" jsonschema:"the line to write to stderr"`
}

type nameArgs struct {
	Name string `json:"name"`
}

type none struct{}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// NewServer returns the test server. Each call returns a fresh server.
func NewServer(opts *Options) *mcp.Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "mcpgw-testserver"
	}
	exit := o.Exit
	if exit == nil {
		exit = os.Exit
	}
	// subs counts the resource subscriptions this server holds, by URI,
	// for the subscriptions tool.
	var subsMu sync.Mutex
	subs := map[string]int{}
	s := mcp.NewServer(&mcp.Implementation{Name: o.Name, Version: "1.0.0"}, &mcp.ServerOptions{
		Instructions:              o.Instructions,
		SupportedProtocolVersions: o.Protocols,
		PageSize:                  o.PageSize,
		Logger:                    o.Logger,
		SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
			subsMu.Lock()
			subs[req.Params.URI]++
			subsMu.Unlock()
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			subsMu.Lock()
			if subs[req.Params.URI]--; subs[req.Params.URI] <= 0 {
				delete(subs, req.Params.URI)
			}
			subsMu.Unlock()
			return nil
		},
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			// Names for greet's "name" and item ids for test://item/{id}.
			values := []string{}
			for _, v := range []string{"Ada", "Alan", "Grace", "1", "2", "42"} {
				if strings.HasPrefix(v, req.Params.Argument.Value) {
					values = append(values, v)
				}
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
		},
	})

	if o.Policy {
		addPolicyTools(s)
	}
	if o.Apps != "" {
		addApp(s, o.Apps)
	}
	if o.LogRequests {
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok && (method == "prompts/get" || method == "resources/read" || method == "completion/complete") {
					//lint:ignore SA1019 MCP logging is deprecated in 2026-07-28 but still in use; a gateway forwards it
					_ = ss.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "served " + method})
				}
				return next(ctx, method, req)
			}
		})
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns the message."},
		func(_ context.Context, _ *mcp.CallToolRequest, a messageArgs) (*mcp.CallToolResult, any, error) {
			return text(a.Message), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds a and b."},
		func(_ context.Context, _ *mcp.CallToolRequest, a addArgs) (*mcp.CallToolResult, addOut, error) {
			sum := a.A + a.B
			return text(strconv.FormatFloat(sum, 'f', -1, 64)), addOut{Sum: sum}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sleep", Description: "Sleeps for ms milliseconds, or until cancelled; reports progress 4 times when asked to."},
		func(ctx context.Context, req *mcp.CallToolRequest, a sleepArgs) (*mcp.CallToolResult, any, error) {
			token := req.Params.GetProgressToken()
			steps := 1
			if token != nil {
				steps = 4
			}
			for i := range steps {
				t := time.NewTimer(time.Duration(a.MS) * time.Millisecond / time.Duration(steps))
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return nil, nil, ctx.Err()
				}
				if token != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: token, Progress: float64(i + 1), Total: float64(steps), Message: fmt.Sprintf("step %d", i+1),
					})
				}
			}
			return text(fmt.Sprintf("slept %d ms", a.MS)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Returns an error result with the message."},
		func(_ context.Context, _ *mcp.CallToolRequest, a messageArgs) (*mcp.CallToolResult, any, error) {
			r := text(a.Message)
			r.IsError = true
			return r, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Writes a line to stderr and exits the process with status 3."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "testserver: crashing on request")
			exit(3)
			return text("still alive"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "Returns the server's process ID."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			return text(strconv.Itoa(os.Getpid())), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "stderr", Description: "Writes a line to stderr."},
		func(_ context.Context, _ *mcp.CallToolRequest, a lineArgs) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, a.Line)
			return text("ok"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "image", Description: "Returns a 1x1 PNG image."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: TinyPNG, MIMEType: "image/png"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Returns the value of an environment variable."},
		func(_ context.Context, _ *mcp.CallToolRequest, a nameArgs) (*mcp.CallToolResult, any, error) {
			return text(os.Getenv(a.Name)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "cwd", Description: "Returns the working directory."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			wd, err := os.Getwd()
			if err != nil {
				return nil, nil, err
			}
			return text(wd), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "spawn", Description: "Starts a long-sleeping child process that shares stderr, in a session of its own with setsid; returns its PID."},
		func(_ context.Context, _ *mcp.CallToolRequest, a spawnArgs) (*mcp.CallToolResult, any, error) {
			cmd := exec.Command("sleep", "3600")
			cmd.Stderr = os.Stderr
			if a.Setsid {
				cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			}
			if err := cmd.Start(); err != nil {
				return nil, nil, err
			}
			go cmd.Wait() // reap it if it ever exits while we live
			return text(strconv.Itoa(cmd.Process.Pid)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Adds an echo-like tool with the given name."},
		func(_ context.Context, _ *mcp.CallToolRequest, a nameArgs) (*mcp.CallToolResult, any, error) {
			if a.Name == "" {
				return nil, nil, fmt.Errorf("name is required")
			}
			mcp.AddTool(s, &mcp.Tool{Name: a.Name, Description: "Added at run time; returns the message."},
				func(_ context.Context, _ *mcp.CallToolRequest, a messageArgs) (*mcp.CallToolResult, any, error) {
					return text(a.Message), nil, nil
				})
			return text("added " + a.Name), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "log", Description: "Sends the message as a log notification at the given level."},
		func(ctx context.Context, req *mcp.CallToolRequest, a logArgs) (*mcp.CallToolResult, any, error) {
			//lint:ignore SA1019 MCP logging is deprecated in 2026-07-28 but still in use; a gateway forwards it
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(a.Level), Data: a.Message}); err != nil {
				return nil, nil, err
			}
			return text("logged"), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "touch", Description: "Sends notifications/resources/updated for the uri to its subscribers."},
		func(ctx context.Context, _ *mcp.CallToolRequest, a uriArgs) (*mcp.CallToolResult, any, error) {
			if err := s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: a.URI}); err != nil {
				return nil, nil, err
			}
			return text("touched"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "subscriptions", Description: "Lists the resource subscriptions this server holds: each subscribed URI, once per subscription, sorted and space-separated (\"none\" for none)."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			subsMu.Lock()
			var uris []string
			for uri, n := range subs {
				for range n {
					uris = append(uris, uri)
				}
			}
			subsMu.Unlock()
			if len(uris) == 0 {
				return text("none"), nil, nil
			}
			slices.Sort(uris)
			return text(strings.Join(uris, " ")), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "meta", Description: "Returns the request's _meta as JSON."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			data, err := json.Marshal(req.Params.Meta)
			if err != nil {
				return nil, nil, err
			}
			return text(string(data)), nil, nil
		})
	// freeze wedges the server from the inside, without signals (a
	// SIGSTOP can be undone by whoever sends a SIGCONT to a reused PID or
	// process group on a busy machine): every request from then on, ping
	// included, waits until its client gives up on it.
	wedged := make(chan struct{})
	var wedge sync.Once
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			select {
			case <-wedged:
				<-ctx.Done()
				return nil, ctx.Err()
			default:
				return next(ctx, method, req)
			}
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "freeze", Description: "Wedges the server: this request and every later one (ping included) get no answer, like a server whose event loop is stuck."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			wedge.Do(func() { close(wedged) })
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})

	addText := func(uri, name, mime, body string) {
		s.AddResource(&mcp.Resource{URI: uri, Name: name, MIMEType: mime},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
					{URI: req.Params.URI, MIMEType: mime, Text: body},
				}}, nil
			})
	}
	addText("test://hello", "hello", "text/plain", "hello, world")
	addText("test://readme", "readme", "text/markdown", "# Test server\n\nUsed by mcpgw's tests.\n")
	addText("test://data.json", "data", "application/json", `{"answer":42}`)

	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://item/{id}", Name: "item", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimPrefix(req.Params.URI, "test://item/")
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: req.Params.URI, MIMEType: "text/plain", Text: "item " + id},
			}}, nil
		})

	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greets someone.", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Say hello to " + req.Params.Arguments["name"] + "."}},
			}}, nil
		})
	return s
}

// addPolicyTools adds the tools of Options.Policy to s.
func addPolicyTools(s *mcp.Server) {
	var deletes atomic.Int64
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	mcp.AddTool(s, &mcp.Tool{Name: "delete_thing", Description: "Deletes the named thing (counts its calls)."},
		func(_ context.Context, _ *mcp.CallToolRequest, a nameArgs) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprintf("deleted %s (call %d)", a.Name, deletes.Add(1))), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "read_thing", Description: "Reads the named thing.", Annotations: readOnly},
		func(_ context.Context, _ *mcp.CallToolRequest, a nameArgs) (*mcp.CallToolResult, any, error) {
			return text("read " + a.Name), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "delete_count", Description: "Returns how many delete_thing calls arrived.", Annotations: readOnly},
		func(_ context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			return text(strconv.FormatInt(deletes.Load(), 10)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "environ", Description: "Returns the names of the process's environment variables, sorted, one a line.", Annotations: readOnly},
		func(_ context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			var names []string
			for _, kv := range os.Environ() {
				k, _, _ := strings.Cut(kv, "=")
				names = append(names, k)
			}
			slices.Sort(names)
			return text(strings.Join(names, "\n")), nil, nil
		})
}

// AppToolNames lists the tools Options.Apps adds.
var AppToolNames = []string{"show_chart", "chart_points"}

func addApp(s *mcp.Server, label string) {
	const uri = "ui://chart/app.html"
	empty := map[string]any{"type": "object"}
	s.AddTool(&mcp.Tool{Name: "show_chart", Description: "Shows a chart of the points.", InputSchema: empty,
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": uri}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("chart of " + label + " shown"), nil
		})
	s.AddTool(&mcp.Tool{Name: "chart_points", Description: "The chart's points, for its app.", InputSchema: empty,
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": uri, "visibility": []any{"app"}}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("[1,2,3]"), nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "ui://chart/{file}", Name: "chart-ui", MIMEType: "text/html;profile=mcp-app"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/html;profile=mcp-app",
				Text: "<!doctype html><title>chart of " + label + "</title>"}}}, nil
		})
}
