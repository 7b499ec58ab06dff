package main

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

// fakeModel is a scripted model behind an OpenAI chat-completions endpoint
// on loopback, for driving a real agent (Pi) deterministically. Each turn
// the agent asks for is answered by the next step of the script: a tool
// call, or final text. Every request is kept, so a test can assert what
// the model was shown (tool lists, tool results).
type fakeModel struct {
	t      testing.TB
	srv    *httptest.Server
	mu     sync.Mutex
	script []modelStep
	reqs   []modelRequest
}

// modelStep is one answer: a tool call (Tool set) or text.
type modelStep struct {
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
type modelRequest struct {
	Bytes    int      // the request body: what the model reads this turn
	Tools    []string // tool names offered
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
	}
}

// lastToolResult is the text of the last tool message.
func (r modelRequest) lastToolResult() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role != "tool" {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			return s
		}
		var parts []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(m.Content, &parts)
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

func newFakeModel(t testing.TB, script ...modelStep) *fakeModel {
	m := &fakeModel{t: t, script: script}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *fakeModel) baseURL() string { return m.srv.URL + "/v1" }

func (m *fakeModel) requests() []modelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]modelRequest(nil), m.reqs...)
}

func (m *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	var body struct {
		Messages json.RawMessage `json:"messages"`
		Tools    []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	raw, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(raw, &body)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := modelRequest{Bytes: len(raw)}
	_ = json.Unmarshal(body.Messages, &req.Messages)
	for _, tl := range body.Tools {
		req.Tools = append(req.Tools, tl.Function.Name)
	}
	m.mu.Lock()
	n := len(m.reqs)
	m.reqs = append(m.reqs, req)
	step := modelStep{Text: "done"}
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
			step = modelStep{Text: fmt.Sprintf("no tool ending in %s among %v", step.ToolFrom, req.Tools)}
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) {
		data, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})
		fmt.Fprintf(w, "data: %s\n\n", data)
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
	usage, _ := json.Marshal(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake",
		"choices": []any{}, "usage": map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
	fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", usage)
}
