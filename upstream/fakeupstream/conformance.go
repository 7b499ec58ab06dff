//lint:file-ignore SA1019 MCP logging is deprecated as of protocol 2026-07-28 but still spoken by the clients and servers mcpgw sits between; a gateway forwards it.

package fakeupstream

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// onePixelPNG is a 1x1 transparent PNG.
var onePixelPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")

// ConformanceServer serves the fixtures the MCP conformance suite's server
// scenarios expect: prompts, resources, completion, tools that return each
// kind of content, log, report progress, sample, elicit, and, for protocol
// 2026-07-28, the probes of its stateless and HTTP scenarios and the tools
// of its input_required scenarios (conformance2026.go). It runs as an
// upstream of mcpgw over stdio, and on its own over Streamable HTTP
// (ConformanceHandler), so that the suite can hold mcpgw to what the
// server passes directly. protocols, if any, are the only protocol
// versions it accepts.
func ConformanceServer(protocols ...string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpgw-conformance-upstream", Version: "1.0.0"}, &mcp.ServerOptions{
		SupportedProtocolVersions: protocols,
		SubscribeHandler:          func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler:        func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			values := []string{}
			for _, v := range []string{"paris", "park", "party", "123", "456"} {
				if strings.HasPrefix(v, req.Params.Argument.Value) {
					values = append(values, v)
				}
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
		},
	})
	user := func(c mcp.Content) *mcp.PromptMessage { return &mcp.PromptMessage{Role: "user", Content: c} }
	s.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{user(&mcp.TextContent{Text: "This is a simple prompt for testing."})}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with arguments",
		Arguments: []*mcp.PromptArgument{{Name: "arg1", Description: "First test argument", Required: true}, {Name: "arg2", Description: "Second test argument", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{user(&mcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])})}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt with an embedded resource",
		Arguments: []*mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				user(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."}}),
				user(&mcp.TextContent{Text: "Please process the embedded resource above."}),
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				user(&mcp.ImageContent{Data: onePixelPNG, MIMEType: "image/png"}),
				user(&mcp.TextContent{Text: "Please analyze the image above."}),
			}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://static-text", Name: "static-text", MIMEType: "text/plain", Description: "A static text resource"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://static-text", MIMEType: "text/plain", Text: "This is the content of the static text resource."}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://static-binary", Name: "static-binary", MIMEType: "image/png", Description: "A static binary resource"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://static-binary", MIMEType: "image/png", Blob: onePixelPNG}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://watched-resource", Name: "watched-resource", MIMEType: "text/plain", Description: "A resource to subscribe to"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://watched-resource", MIMEType: "text/plain", Text: "Watched resource content"}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template", MIMEType: "application/json", Description: "A resource template"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimSuffix(strings.TrimPrefix(req.Params.URI, "test://template/"), "/data")
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json",
				Text: fmt.Sprintf(`{"id":%q,"templateTest":true,"data":"Data for ID: %s"}`, id, id)}}}, nil
		})
	addConformanceTools(s)
	addStatelessFixtures(s)
	addInputRequiredFixtures(s)
	return s
}

// oneSampleWAV is a WAV file of one silent 8-bit sample.
var oneSampleWAV = []byte("RIFF%\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00@\x1f\x00\x00\x01\x00\x08\x00data\x01\x00\x00\x00\x80")

func addConformanceTools(s *mcp.Server) {
	tool := func(name, desc string, h mcp.ToolHandler) {
		s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: map[string]any{"type": "object"}}, h)
	}
	result := func(cs ...mcp.Content) *mcp.CallToolResult { return &mcp.CallToolResult{Content: cs} }
	tool("test_simple_text", "Returns a text.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return result(&mcp.TextContent{Text: "This is a simple text response for testing."}), nil
	})
	tool("test_error_handling", "Fails, as a tool does.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "This tool intentionally returns an error for testing"}}}, nil
	})
	tool("test_image_content", "Returns an image.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return result(&mcp.ImageContent{Data: onePixelPNG, MIMEType: "image/png"}), nil
	})
	tool("test_audio_content", "Returns audio.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return result(&mcp.AudioContent{Data: oneSampleWAV, MIMEType: "audio/wav"}), nil
	})
	tool("test_embedded_resource", "Returns an embedded resource.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return result(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}}), nil
	})
	tool("test_multiple_content_types", "Returns text, an image and a resource.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return result(
			&mcp.TextContent{Text: "Multiple content types test:"},
			&mcp.ImageContent{Data: onePixelPNG, MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}},
		), nil
	})
	tool("test_tool_with_logging", "Logs three messages at info level.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for i, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			if i > 0 {
				time.Sleep(50 * time.Millisecond)
			}
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: m}); err != nil {
				return nil, err
			}
		}
		return result(&mcp.TextContent{Text: "Logging test completed"}), nil
	})
	addClientRequestTools(s)
	tool("test_large_content", "Returns a 1 MiB image, 1 MiB of audio and a 1 MiB blob, with _meta.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{
			Meta: mcp.Meta{"io.mcpgw.test/marker": "large"},
			Content: []mcp.Content{
				&mcp.ImageContent{Data: LargeBytes(1<<20, 1), MIMEType: "image/png"},
				&mcp.AudioContent{Data: LargeBytes(1<<20, 2), MIMEType: "audio/wav"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://large-blob", MIMEType: "application/octet-stream", Blob: LargeBytes(1<<20, 3)}},
			},
		}, nil
	})
	s.AddTool(&mcp.Tool{Name: "test_wait", Description: "Reports progress 0 of 1, then waits for ms milliseconds or until cancelled.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"ms": map[string]any{"type": "integer"}}}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ MS int }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			if token := req.Params.GetProgressToken(); token != nil {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 0, Total: 1}); err != nil {
					return nil, err
				}
			}
			select {
			case <-time.After(time.Duration(args.MS) * time.Millisecond):
				return result(&mcp.TextContent{Text: "waited"}), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		token := req.Params.GetProgressToken()
		for i, p := range []float64{0, 50, 100} {
			if i > 0 {
				time.Sleep(50 * time.Millisecond)
			}
			if token != nil {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p, Total: 100}); err != nil {
					return nil, err
				}
			}
		}
		return result(&mcp.TextContent{Text: "Progress test completed"}), nil
	})
}

// addClientRequestTools adds the tools that make requests of the client:
// sampling, elicitation and roots. They ask the way a server on protocol
// 2026-07-28 does, with InputRequests in the result of a call the client
// then retries; the SDK turns that into plain requests to a client on an
// older protocol.
func addClientRequestTools(s *mcp.Server) {
	text, obj := textResult, objectSchema
	str := map[string]any{"type": "string"}
	// ask returns the client's answer to in, or, if the call does not
	// carry it yet, the result that asks for it.
	ask := func(req *mcp.CallToolRequest, in mcp.InputRequest) (mcp.InputResponse, *mcp.CallToolResult) {
		if r, ok := req.Params.InputResponses["input"]; ok {
			return r, nil
		}
		return nil, &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"input": in}}
	}
	s.AddTool(&mcp.Tool{Name: "test_sampling", Description: "Asks the client to sample its model.",
		InputSchema: obj(map[string]any{"prompt": str}, "prompt")},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Prompt string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			r, pending := ask(req, &mcp.CreateMessageParams{MaxTokens: 100,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: args.Prompt}}}})
			if pending != nil {
				return pending, nil
			}
			res, ok := r.(*mcp.CreateMessageWithToolsResult)
			if !ok {
				return nil, fmt.Errorf("sampling answered with %T", r)
			}
			return text("LLM response: %s", samplingText(res)), nil
		})
	s.AddTool(&mcp.Tool{Name: "test_roots", Description: "Lists the client's roots.", InputSchema: obj(map[string]any{})},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r, pending := ask(req, &mcp.ListRootsParams{})
			if pending != nil {
				return pending, nil
			}
			res, ok := r.(*mcp.ListRootsResult)
			if !ok {
				return nil, fmt.Errorf("roots/list answered with %T", r)
			}
			return text("Roots: %s", rootURIs(res)), nil
		})
	elicit := func(req *mcp.CallToolRequest, message string, schema map[string]any) (*mcp.CallToolResult, error) {
		r, pending := ask(req, &mcp.ElicitParams{Message: message, RequestedSchema: schema})
		if pending != nil {
			return pending, nil
		}
		res, ok := r.(*mcp.ElicitResult)
		if !ok {
			return nil, fmt.Errorf("elicitation answered with %T", r)
		}
		content, _ := json.Marshal(res.Content)
		return text("Elicitation completed: action=%s, content=%s", res.Action, content), nil
	}
	s.AddTool(&mcp.Tool{Name: "test_elicitation", Description: "Asks the user for a name and an email address.",
		InputSchema: obj(map[string]any{"message": str}, "message")},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Message string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return elicit(req, args.Message, obj(map[string]any{
				"username": map[string]any{"type": "string", "description": "User's response"},
				"email":    map[string]any{"type": "string", "description": "User's email address"},
			}, "username", "email"))
		})
	s.AddTool(&mcp.Tool{Name: "test_elicitation_sep1034_defaults", Description: "Elicits fields with default values.", InputSchema: obj(map[string]any{})},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return elicit(req, "Please review and update the form fields with defaults", obj(map[string]any{
				"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
				"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
				"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
				"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
				"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
			}))
		})
	titled := func(key string, pairs ...string) []map[string]any {
		var out []map[string]any
		for i := 0; i+1 < len(pairs); i += 2 {
			out = append(out, map[string]any{"const": pairs[i], key: pairs[i+1]})
		}
		return out
	}
	s.AddTool(&mcp.Tool{Name: "test_elicitation_sep1330_enums", Description: "Elicits each kind of enum field.", InputSchema: obj(map[string]any{})},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return elicit(req, "Please select options from the enum fields", obj(map[string]any{
				"untitledSingle": map[string]any{"type": "string", "description": "Select one option", "enum": []string{"option1", "option2", "option3"}},
				"titledSingle": map[string]any{"type": "string", "description": "Select one option with titles",
					"oneOf": titled("title", "value1", "First Option", "value2", "Second Option", "value3", "Third Option")},
				"legacyEnum": map[string]any{"type": "string", "description": "Select one option (legacy)",
					"enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
				"untitledMulti": map[string]any{"type": "array", "description": "Select multiple options",
					"items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
				"titledMulti": map[string]any{"type": "array", "description": "Select multiple options with titles",
					"items": map[string]any{"anyOf": titled("title", "value1", "First Choice", "value2", "Second Choice", "value3", "Third Choice")}},
			}))
		})
	// The keywords of JSON Schema 2020-12 a listing must keep as they are
	// (SEP-1613), and from 2026-07-28 those of composition, conditions and
	// anchors too (SEP-2106): a contact by phone or by email.
	address := obj(map[string]any{"street": str, "city": str})
	address["$anchor"] = "postalAddress"
	s.AddTool(&mcp.Tool{Name: "json_schema_2020_12_tool", Description: "Tool with JSON Schema 2020-12 features",
		InputSchema: map[string]any{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type":    "object",
			"$defs":   map[string]any{"address": address},
			"properties": map[string]any{
				"name":    str,
				"address": map[string]any{"$ref": "#/$defs/address"},
				"contact": map[string]any{"type": "string", "enum": []string{"phone", "email"}},
				"phone":   str,
				"email":   str,
			},
			"allOf": []any{map[string]any{"anyOf": []any{
				map[string]any{"required": []string{"phone"}},
				map[string]any{"required": []string{"email"}},
			}}},
			"if":                   map[string]any{"properties": map[string]any{"contact": map[string]any{"const": "phone"}}, "required": []string{"contact"}},
			"then":                 map[string]any{"required": []string{"phone"}},
			"else":                 map[string]any{"required": []string{"email"}},
			"additionalProperties": false,
		}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("ok"), nil })
}

// LargeBytes returns n bytes of a sequence determined by seed, which no
// compression or text conversion leaves unchanged by accident.
func LargeBytes(n int, seed uint32) []byte {
	b := make([]byte, n)
	x := seed*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}
