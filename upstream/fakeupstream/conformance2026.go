//lint:file-ignore SA1019 sampling, roots and logging are deprecated as of protocol 2026-07-28, and still what the suite's scenarios ask of a server.

package fakeupstream

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addStatelessFixtures adds the tools the suite's server-stateless and
// HTTP scenarios of protocol 2026-07-28 call to probe a server (SEP-2575,
// SEP-2243): one that needs a client capability, one whose answer
// streams, one that logs, one with a parameter mirrored in a header, and
// two that change the tool and prompt lists.
func addStatelessFixtures(s *mcp.Server) {
	tool := func(name, desc string, h mcp.ToolHandler) {
		s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: map[string]any{"type": "object"}}, h)
	}
	// "If processing a request requires a capability the client did not
	// include in io.modelcontextprotocol/clientCapabilities, the server
	// MUST return a MissingRequiredClientCapabilityError" (SEP-2575).
	tool("test_missing_capability", "Needs the client's sampling capability, and refuses a client that did not declare it.",
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if caps := req.ClientCapabilities(); caps == nil || caps.Sampling == nil {
				data, _ := json.Marshal(mcp.MissingRequiredClientCapabilityData{
					RequiredCapabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}},
				})
				return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "this tool needs the client's sampling capability", Data: data}
			}
			return textResult("the client can sample"), nil
		})
	// On a request's stream a server sends notifications and the
	// request's result, never a request of its own: what it needs of the
	// client is asked in an input_required result.
	tool("test_streaming_elicitation", "Reports progress, then asks the user to confirm, in an input_required result.",
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r, ok := req.Params.InputResponses["confirm"].(*mcp.ElicitResult); ok {
				return textResult("Elicitation completed: action=%s", r.Action), nil
			}
			if token := req.Params.GetProgressToken(); token != nil {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1, Total: 2}); err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{
				Message:         "Please confirm",
				RequestedSchema: objectSchema(map[string]any{"ok": map[string]any{"type": "boolean"}}, "ok"),
			}}}, nil
		})
	// The go-sdk sends a log message only at or above the level the
	// request names in _meta (or the session set): none for a request
	// that names none.
	tool("test_logging_tool", "Logs one message at info level.",
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "test_logging_tool ran"}); err != nil {
				return nil, err
			}
			return textResult("logged"), nil
		})
	// A parameter marked x-mcp-header is mirrored by the client into an
	// Mcp-Param-Region header, which the go-sdk checks against the body
	// (SEP-2243).
	s.AddTool(&mcp.Tool{Name: "test_header_param", Description: "Echoes its region, which the client also sends as the Mcp-Param-Region header.",
		InputSchema: objectSchema(map[string]any{"region": map[string]any{"type": "string", "x-mcp-header": "Region"}}, "region")},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Region string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return textResult("region: %s", args.Region), nil
		})
	// Adding an item replaces one of the same name, and the go-sdk
	// announces the list as changed to every subscription/session that
	// listens for it.
	changed := &mcp.Tool{Name: "test_changed_tool", Description: "Re-added by test_trigger_tool_change.", InputSchema: map[string]any{"type": "object"}}
	changedHandler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResult("changed"), nil
	}
	s.AddTool(changed, changedHandler)
	tool("test_trigger_tool_change", "Re-adds test_changed_tool, which announces the tool list as changed.",
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.AddTool(changed, changedHandler)
			return textResult("tool list changed"), nil
		})
	changedPrompt := &mcp.Prompt{Name: "test_changed_prompt", Description: "Re-added by test_trigger_prompt_change."}
	changedPromptHandler := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "changed"}}}}, nil
	}
	s.AddPrompt(changedPrompt, changedPromptHandler)
	tool("test_trigger_prompt_change", "Re-adds test_changed_prompt, which announces the prompt list as changed.",
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.AddPrompt(changedPrompt, changedPromptHandler)
			return textResult("prompt list changed"), nil
		})
}

// addInputRequiredFixtures adds the tools and the prompt of the suite's
// input-required-result scenarios (protocol 2026-07-28, SEP-2322): each
// answers a call that lacks what it needs with an input_required result
// naming its questions, and a call that carries the answers with its
// result. A call that misses an answer is asked again. The state of a
// call of several rounds travels in requestState, sealed so that a
// changed state is refused. One resource, InputRequiredResource, does the
// same for resources/read, which the revision allows as well.
func addInputRequiredFixtures(s *mcp.Server) {
	seal := newStateSeal()
	name := &mcp.ElicitParams{Message: "What is your name?",
		RequestedSchema: objectSchema(map[string]any{"name": map[string]any{"type": "string"}}, "name")}
	confirm := &mcp.ElicitParams{Message: "Please confirm",
		RequestedSchema: objectSchema(map[string]any{"ok": map[string]any{"type": "boolean"}}, "ok")}
	sample := func(prompt string, maxTokens int64) *mcp.CreateMessageParams {
		return &mcp.CreateMessageParams{MaxTokens: maxTokens,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: prompt}}}}
	}
	tool := func(name, desc string, h mcp.ToolHandler) {
		s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: map[string]any{"type": "object"}}, h)
	}

	tool("test_input_required_result_elicitation", "Asks the user's name, then greets them.",
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r, ok := req.Params.InputResponses["user_name"].(*mcp.ElicitResult)
			if !ok {
				return inputRequired("", "user_name", name), nil
			}
			return textResult("Hello, %v!", r.Content["name"]), nil
		})
	tool("test_input_required_result_sampling", "Asks the client's model for the capital of France.",
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r, ok := req.Params.InputResponses["capital_question"].(*mcp.CreateMessageWithToolsResult)
			if !ok {
				return inputRequired("", "capital_question", sample("What is the capital of France?", 100)), nil
			}
			return textResult("The model said: %s", samplingText(r)), nil
		})
	tool("test_input_required_result_list_roots", "Asks the client's roots, then lists them.",
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r, ok := req.Params.InputResponses["client_roots"].(*mcp.ListRootsResult)
			if !ok {
				return inputRequired("", "client_roots", &mcp.ListRootsParams{}), nil
			}
			return textResult("Roots: %s", rootURIs(r)), nil
		})
	tool("test_input_required_result_request_state", "Asks for a confirmation, with a requestState it checks on the retry.",
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			const tool = "test_input_required_result_request_state"
			_, answered := req.Params.InputResponses["confirm"].(*mcp.ElicitResult)
			if !answered || req.Params.RequestState == "" {
				return inputRequired(seal.seal(tool, "confirm"), "confirm", confirm), nil
			}
			if _, err := seal.open(req.Params.RequestState, tool, "confirm"); err != nil {
				return nil, err
			}
			return textResult("state-ok: confirmed"), nil
		})
	tool("test_input_required_result_multiple_inputs", "Asks the user, the client's model and the client's roots at once.",
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			const tool = "test_input_required_result_multiple_inputs"
			in := req.Params.InputResponses
			user, ok1 := in["user_name"].(*mcp.ElicitResult)
			greeting, ok2 := in["greeting"].(*mcp.CreateMessageWithToolsResult)
			roots, ok3 := in["client_roots"].(*mcp.ListRootsResult)
			if !ok1 || !ok2 || !ok3 || req.Params.RequestState == "" {
				return &mcp.CallToolResult{RequestState: seal.seal(tool, "all"), InputRequests: mcp.InputRequestMap{
					"user_name":    name,
					"greeting":     sample("Generate a greeting", 50),
					"client_roots": &mcp.ListRootsParams{},
				}}, nil
			}
			if _, err := seal.open(req.Params.RequestState, tool, "all"); err != nil {
				return nil, err
			}
			return textResult("%s, %v! Roots: %s", samplingText(greeting), user.Content["name"], rootURIs(roots)), nil
		})
	tool("test_input_required_result_multi_round", "Asks the user's name, then their favourite colour, one round each.",
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			const tool = "test_input_required_result_multi_round"
			step1 := func() *mcp.CallToolResult {
				return inputRequired(seal.seal(tool, "step1"), "step1", &mcp.ElicitParams{Message: "Step 1: What is your name?",
					RequestedSchema: objectSchema(map[string]any{"name": map[string]any{"type": "string"}}, "name")})
			}
			if req.Params.RequestState == "" {
				return step1(), nil
			}
			step, err := seal.open(req.Params.RequestState, tool, "")
			if err != nil {
				return nil, err
			}
			switch step {
			case "step1":
				r, ok := req.Params.InputResponses["step1"].(*mcp.ElicitResult)
				if !ok {
					return step1(), nil
				}
				return inputRequired(seal.seal(tool, "step2:"+fmt.Sprint(r.Content["name"])), "step2", &mcp.ElicitParams{Message: "Step 2: What is your favorite color?",
					RequestedSchema: objectSchema(map[string]any{"color": map[string]any{"type": "string"}}, "color")}), nil
			default:
				r, ok := req.Params.InputResponses["step2"].(*mcp.ElicitResult)
				if !ok {
					return inputRequired(req.Params.RequestState, "step2", &mcp.ElicitParams{Message: "Step 2: What is your favorite color?",
						RequestedSchema: objectSchema(map[string]any{"color": map[string]any{"type": "string"}}, "color")}), nil
				}
				return textResult("%s likes %v", strings.TrimPrefix(step, "step2:"), r.Content["color"]), nil
			}
		})
	tool("test_input_required_result_tampered_state", "Asks for a confirmation with a sealed requestState, and refuses a changed one.",
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			const tool = "test_input_required_result_tampered_state"
			if req.Params.RequestState == "" {
				return inputRequired(seal.seal(tool, "confirm"), "confirm", confirm), nil
			}
			if _, err := seal.open(req.Params.RequestState, tool, "confirm"); err != nil {
				return nil, err
			}
			if _, ok := req.Params.InputResponses["confirm"].(*mcp.ElicitResult); !ok {
				return inputRequired(seal.seal(tool, "confirm"), "confirm", confirm), nil
			}
			return textResult("confirmed"), nil
		})
	// "Servers MUST NOT send input requests for capabilities the client
	// has not declared" (SEP-2322).
	tool("test_input_required_result_capabilities", "Asks the client only what its declared capabilities allow: its model, its user, its roots.",
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			caps := req.ClientCapabilities()
			if caps == nil {
				caps = &mcp.ClientCapabilities{}
			}
			if len(req.Params.InputResponses) > 0 {
				return textResult("answered: %d", len(req.Params.InputResponses)), nil
			}
			asks := mcp.InputRequestMap{}
			if caps.Sampling != nil {
				asks["capital_question"] = sample("What is the capital of France?", 100)
			}
			if caps.Elicitation != nil {
				asks["user_name"] = name
			}
			if caps.RootsV2 != nil {
				asks["client_roots"] = &mcp.ListRootsParams{}
			}
			if len(asks) == 0 {
				return textResult("the client declared nothing to ask"), nil
			}
			return &mcp.CallToolResult{InputRequests: asks}, nil
		})
	addInputRequiredResource(s, seal)
	s.AddPrompt(&mcp.Prompt{Name: "test_input_required_result_prompt", Description: "Asks the user what the prompt is about, then returns it."},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			r, ok := req.Params.InputResponses["user_context"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{"user_context": &mcp.ElicitParams{
					Message:         "What context should the prompt use?",
					RequestedSchema: objectSchema(map[string]any{"context": map[string]any{"type": "string"}}, "context"),
				}}}, nil
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
				Content: &mcp.TextContent{Text: fmt.Sprintf("Answer with this context in mind: %v", r.Content["context"])}}}}, nil
		})
}

// InputRequiredResource is the URI of the conformance server's resource
// whose read asks the user for a decision (an elicitation form with one
// string, "decision"), in an input_required result with a sealed
// requestState, and whose retry with the answer and that state untouched
// reads "decision: " and the answer.
const InputRequiredResource = "test://input-required"

// addInputRequiredResource adds InputRequiredResource to s.
func addInputRequiredResource(s *mcp.Server, seal *stateSeal) {
	ask := &mcp.ElicitParams{Message: "Which decision should the resource show?",
		RequestedSchema: objectSchema(map[string]any{"decision": map[string]any{"type": "string"}}, "decision")}
	s.AddResource(&mcp.Resource{URI: InputRequiredResource, Name: "input-required", MIMEType: "text/plain",
		Description: "Asks the user for a decision, then shows it."},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			r, ok := req.Params.InputResponses["decision"].(*mcp.ElicitResult)
			if !ok || req.Params.RequestState == "" {
				return &mcp.ReadResourceResult{RequestState: seal.seal(InputRequiredResource, "decision"),
					InputRequests: mcp.InputRequestMap{"decision": ask}}, nil
			}
			if _, err := seal.open(req.Params.RequestState, InputRequiredResource, "decision"); err != nil {
				return nil, err
			}
			text := "declined"
			if r.Action == "accept" {
				text = fmt.Sprintf("decision: %v", r.Content["decision"])
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: InputRequiredResource, MIMEType: "text/plain", Text: text}}}, nil
		})
}

// stateSeal seals a call's state into a requestState the client echoes
// back: readable, but not changeable without the process's key.
type stateSeal struct{ key []byte }

func newStateSeal() *stateSeal {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return &stateSeal{key: key}
}

func (s *stateSeal) mac(payload string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// seal returns the requestState of tool at step.
func (s *stateSeal) seal(tool, step string) string {
	payload := base64.RawURLEncoding.EncodeToString([]byte(tool + "\n" + step))
	return payload + "." + s.mac(payload)
}

// open returns the step sealed in state, which must be tool's (and, if
// step is not empty, at step), or an invalid-params error.
func (s *stateSeal) open(state, tool, step string) (string, error) {
	invalid := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState fails its integrity check"}
	payload, mac, ok := strings.Cut(state, ".")
	if !ok || !hmac.Equal([]byte(mac), []byte(s.mac(payload))) {
		return "", invalid
	}
	b, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return "", invalid
	}
	gotTool, gotStep, _ := strings.Cut(string(b), "\n")
	if gotTool != tool || (step != "" && gotStep != step) {
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState is not of this call"}
	}
	return gotStep, nil
}

// inputRequired is the result that asks the client in with key, carrying
// state (if any).
func inputRequired(state, key string, in mcp.InputRequest) *mcp.CallToolResult {
	return &mcp.CallToolResult{RequestState: state, InputRequests: mcp.InputRequestMap{key: in}}
}

func textResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func objectSchema(props map[string]any, required ...string) map[string]any {
	m := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		m["required"] = required
	}
	return m
}

func samplingText(r *mcp.CreateMessageWithToolsResult) string {
	var out []string
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			out = append(out, t.Text)
		}
	}
	return strings.Join(out, " ")
}

func rootURIs(r *mcp.ListRootsResult) string {
	var uris []string
	for _, root := range r.Roots {
		uris = append(uris, root.URI)
	}
	return strings.Join(uris, " ")
}
