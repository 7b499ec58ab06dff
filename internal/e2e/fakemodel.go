//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeModel is a scripted model behind a model API on loopback, for
// driving a real agent deterministically. Each turn the agent asks for is
// answered by the next step of the script: a tool call, or final text.
// Every request is kept, so a test can assert what the model was shown
// (tool lists, tool results). The API's wire format is a modelWire: the
// OpenAI chat completions (Pi, opencode), the Anthropic Messages API
// (Claude Code), Gemini's generateContent (Gemini CLI) and the OpenAI
// Responses API (Codex).
type FakeModel struct {
	t    testing.TB
	srv  *httptest.Server
	wire ModelWire

	mu     sync.Mutex
	script []ModelStep
	reqs   []ModelRequest
	side   []ModelRequest // requests that are no turn of the conversation
	other  []string       // method and path of requests no wire handles
}

// modelStep is one answer: a tool call (Tool set) or text.
type ModelStep struct {
	Tool string
	Args any
	// ToolFrom, when set, picks the tool name from the tools the request
	// offers: the first whose name ends with it (clients prefix names).
	ToolFrom string
	Text     string
	// Before runs before the step is answered (e.g. restart the daemon
	// between two turns).
	Before func()
}

// modelRequest is what the agent sent for one turn.
type ModelRequest struct {
	Bytes   int      // the request body: what the model reads this turn
	Body    string   // the request body itself
	Tools   []string // tool names offered
	Results []string // the text of each tool result in the conversation, in order
	// Side marks a request the agent makes besides the conversation (a
	// title, a quota check): answered with text, never from the script.
	Side bool
	// single: the client asked for one JSON answer, not a stream.
	single bool
	// namespace is the namespace of each tool offered inside one (the
	// Responses API's), by the name in Tools.
	namespace map[string]string
}

// lastToolResult is the text of the last tool result.
func (r ModelRequest) LastToolResult() string {
	if len(r.Results) == 0 {
		return ""
	}
	return r.Results[len(r.Results)-1]
}

// modelWire is one model API's wire format. parse and write are called
// from the fake model's handler goroutines, one request at a time each.
type ModelWire interface {
	// handles reports whether a request to path is a model turn.
	handles(path string) bool
	// parse reads one request's body, sent to path.
	parse(path string, raw []byte) (ModelRequest, error)
	// write answers req with step; n is the request's number, for unique
	// ids.
	write(w http.ResponseWriter, req ModelRequest, n int, step ModelStep)
}

// newFakeModel serves script over the OpenAI chat completions API.
func NewFakeModel(t testing.TB, script ...ModelStep) *FakeModel {
	return NewFakeModelWire(t, OpenAIChat{}, script...)
}

func NewFakeModelWire(t testing.TB, wire ModelWire, script ...ModelStep) *FakeModel {
	m := &FakeModel{t: t, wire: wire, script: script}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

// baseURL is the API's base as OpenAI clients take it (with /v1).
func (m *FakeModel) BaseURL() string { return m.srv.URL + "/v1" }

// rootURL is the server's address, for clients that add the API's path
// themselves (Anthropic, Gemini).
func (m *FakeModel) RootURL() string { return m.srv.URL }

// requests returns the conversation's requests, side requests left out.
func (m *FakeModel) Requests() []ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]ModelRequest(nil), m.reqs...)
}

// logRequests logs what the model got: each turn's tools and last tool
// result, how many side requests, and the paths no wire handled.
func (m *FakeModel) LogRequests() {
	m.t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, r := range m.reqs {
		m.t.Logf("request %d (%d bytes) tools %v\nlast tool result: %s", i, r.Bytes, r.Tools, r.LastToolResult())
	}
	m.t.Logf("%d side requests; requests to other paths: %v", len(m.side), m.other)
}

func (m *FakeModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !m.wire.handles(r.URL.Path) {
		m.mu.Lock()
		m.other = append(m.other, r.Method+" "+r.URL.Path)
		m.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	raw, err := io.ReadAll(r.Body)
	var req ModelRequest
	if err == nil {
		req, err = m.wire.parse(r.URL.Path, raw)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req.Bytes, req.Body = len(raw), string(raw)
	m.mu.Lock()
	if req.Side {
		n := len(m.side)
		m.side = append(m.side, req)
		m.mu.Unlock()
		m.wire.write(w, req, 1000+n, ModelStep{Text: "ok"})
		return
	}
	n := len(m.reqs)
	m.reqs = append(m.reqs, req)
	step := ModelStep{Text: "done"}
	if n < len(m.script) {
		step = m.script[n]
	}
	m.mu.Unlock()
	if step.Before != nil {
		step.Before()
	}

	if step.ToolFrom != "" {
		for _, name := range req.Tools {
			if strings.HasSuffix(name, step.ToolFrom) {
				step.Tool = name
				break
			}
		}
		if step.Tool == "" {
			step = ModelStep{Text: fmt.Sprintf("no tool ending in %s among %v", step.ToolFrom, req.Tools)}
		}
	}
	m.wire.write(w, req, n, step)
}

// sse writes one server-sent event; event may be empty.
func sse(w io.Writer, event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
}

// contentText is the text of a tool result's content as the APIs send it:
// a string, or a list of parts whose text parts are joined. A reference to
// a tool (Anthropic's tool_reference, what Claude Code's ToolSearch
// returns) is written as its name, one a line.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ToolName string `json:"tool_name"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "tool_reference" {
			b.WriteString(p.ToolName + "\n")
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// openAIChat is the OpenAI chat completions API (streamed), as Pi and
// opencode speak it.
type OpenAIChat struct{}

func (OpenAIChat) handles(path string) bool { return strings.HasSuffix(path, "/chat/completions") }

func (OpenAIChat) parse(_ string, raw []byte) (ModelRequest, error) {
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return ModelRequest{}, err
	}
	// A request that offers no tools is a side request (opencode asks for
	// a title so).
	req := ModelRequest{Side: len(body.Tools) == 0}
	for _, tl := range body.Tools {
		req.Tools = append(req.Tools, tl.Function.Name)
	}
	for _, m := range body.Messages {
		if m.Role == "tool" {
			req.Results = append(req.Results, contentText(m.Content))
		}
	}
	return req, nil
}

func (OpenAIChat) write(w http.ResponseWriter, _ ModelRequest, n int, step ModelStep) {
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) {
		sse(w, "", map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})
	}
	if step.Tool != "" {
		args, _ := json.Marshal(step.Args)
		chunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
			"index": 0, "id": fmt.Sprintf("call_%d", n), "type": "function",
			"function": map[string]any{"name": step.Tool, "arguments": string(args)},
		}}}, nil)
		chunk(map[string]any{}, "tool_calls")
	} else {
		chunk(map[string]any{"role": "assistant", "content": step.Text}, nil)
		chunk(map[string]any{}, "stop")
	}
	sse(w, "", map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake",
		"choices": []any{}, "usage": map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// anthropicMessages is the Anthropic Messages API (streamed), as Claude
// Code speaks it. A request that offers no tools is a side request (Claude
// Code asks a small model for titles and such).
type AnthropicMessages struct{}

func (AnthropicMessages) handles(path string) bool { return path == "/v1/messages" }

func (AnthropicMessages) parse(_ string, raw []byte) (ModelRequest, error) {
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return ModelRequest{}, err
	}
	req := ModelRequest{Side: len(body.Tools) == 0}
	for _, tl := range body.Tools {
		req.Tools = append(req.Tools, tl.Name)
	}
	for _, m := range body.Messages {
		var blocks []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}
		if m.Role != "user" || json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				req.Results = append(req.Results, contentText(b.Content))
			}
		}
	}
	return req, nil
}

func (AnthropicMessages) write(w http.ResponseWriter, _ ModelRequest, n int, step ModelStep) {
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant", "model": "fake",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1},
	}})
	stop := "end_turn"
	if step.Tool != "" {
		stop = "tool_use"
		args, _ := json.Marshal(step.Args)
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{
			"type": "tool_use", "id": fmt.Sprintf("toolu_%d", n), "name": step.Tool, "input": map[string]any{},
		}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}})
	} else {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": step.Text}})
	}
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 1}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

// geminiContent is Gemini's generateContent API, as Gemini CLI speaks it:
// the conversation streamed (streamGenerateContent), its side requests
// (checks of who speaks next, of loops) as one answer (generateContent).
type GeminiContent struct{}

func (GeminiContent) handles(path string) bool {
	return strings.HasSuffix(path, ":streamGenerateContent") || strings.HasSuffix(path, ":generateContent")
}

func (GeminiContent) parse(path string, raw []byte) (ModelRequest, error) {
	var body struct {
		Contents []struct {
			Parts []struct {
				FunctionResponse *struct {
					Response struct {
						Output  json.RawMessage `json:"output"`
						Content json.RawMessage `json:"content"`
					} `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return ModelRequest{}, err
	}
	req := ModelRequest{single: strings.HasSuffix(path, ":generateContent")}
	req.Side = req.single
	for _, tl := range body.Tools {
		for _, f := range tl.FunctionDeclarations {
			req.Tools = append(req.Tools, f.Name)
		}
	}
	for _, c := range body.Contents {
		for _, p := range c.Parts {
			if r := p.FunctionResponse; r != nil {
				if len(r.Response.Output) > 0 {
					req.Results = append(req.Results, contentText(r.Response.Output))
				} else {
					req.Results = append(req.Results, contentText(r.Response.Content))
				}
			}
		}
	}
	return req, nil
}

func (GeminiContent) write(w http.ResponseWriter, req ModelRequest, n int, step ModelStep) {
	part := map[string]any{"text": step.Text}
	if step.Tool != "" {
		part = map[string]any{"functionCall": map[string]any{"name": step.Tool, "args": step.Args}}
	}
	answer := map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": []any{part}}}},
		"usageMetadata": map[string]any{"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
		"modelVersion":  "fake",
	}
	if req.single {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(answer)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "", answer)
}

// openAIResponses is the OpenAI Responses API (streamed), as Codex speaks
// it. Codex sends an MCP server's tools as one namespace (mcp__mcpgw with
// the tools inside); Tools names them namespace + tool, as the model
// calls them.
type OpenAIResponses struct{}

func (OpenAIResponses) handles(path string) bool { return strings.HasSuffix(path, "/responses") }

func (OpenAIResponses) parse(_ string, raw []byte) (ModelRequest, error) {
	type tool struct {
		Type  string `json:"type"`
		Name  string `json:"name"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	var body struct {
		Input []struct {
			Type   string          `json:"type"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
		Tools []tool `json:"tools"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return ModelRequest{}, err
	}
	req := ModelRequest{namespace: map[string]string{}}
	for _, tl := range body.Tools {
		if tl.Type != "namespace" {
			req.Tools = append(req.Tools, tl.Name)
			continue
		}
		for _, inner := range tl.Tools {
			name := tl.Name + "__" + inner.Name
			req.Tools = append(req.Tools, name)
			req.namespace[name] = tl.Name
		}
	}
	for _, in := range body.Input {
		if in.Type == "function_call_output" {
			req.Results = append(req.Results, contentText(in.Output))
		}
	}
	return req, nil
}

func (OpenAIResponses) write(w http.ResponseWriter, req ModelRequest, n int, step ModelStep) {
	w.Header().Set("Content-Type", "text/event-stream")
	id := fmt.Sprintf("resp_%d", n)
	sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	item := map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_%d", n),
		"content": []any{map[string]any{"type": "output_text", "text": step.Text, "annotations": []any{}}}}
	if step.Tool != "" {
		args, _ := json.Marshal(step.Args)
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", n), "call_id": fmt.Sprintf("call_%d", n),
			"name": step.Tool, "arguments": string(args)}
		if ns, ok := req.namespace[step.Tool]; ok {
			item["namespace"], item["name"] = ns, strings.TrimPrefix(step.Tool, ns+"__")
		}
	}
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": id,
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}})
}
