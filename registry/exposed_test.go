package registry

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A prompt, resource or template is offered under its gateway name or URI
// by a definition made once per view and shared by every session: the
// upstream's own definition (the cached listing) is never changed, and is
// offered as it is where nothing was renamed.
func TestExposedDefinitions(t *testing.T) {
	t.Parallel()
	c := NewCatalog(testConfig(&Server{Name: "a", Enabled: true}, &Server{Name: "b", Enabled: true}))
	greet := &mcp.Prompt{Name: "greet", Description: "says hello"}
	readmeA := &mcp.Resource{Name: "readme", URI: "repo://readme"}
	readmeB := &mcp.Resource{Name: "readme", URI: "repo://readme"}
	tmplA := &mcp.ResourceTemplate{Name: "file", URITemplate: "file:///{path}"}
	tmplB := &mcp.ResourceTemplate{Name: "file", URITemplate: "file:///{path}"}
	c.SetListing("h-a", &Listing{Source: SourceLive, Prompts: []*mcp.Prompt{greet},
		Resources: []*mcp.Resource{readmeA}, Templates: []*mcp.ResourceTemplate{tmplA}})
	v := c.SetListing("h-b", &Listing{Source: SourceLive,
		Resources: []*mcp.Resource{readmeB}, Templates: []*mcp.ResourceTemplate{tmplB}})

	if len(v.Prompts) != 1 || len(v.Resources) != 2 || len(v.Templates) != 2 {
		t.Fatalf("view has %d prompts, %d resources, %d templates; want 1, 2, 2", len(v.Prompts), len(v.Resources), len(v.Templates))
	}
	p := v.Prompts[0]
	if got := p.Exposed(); got.Name != p.Name || p.Name != "a_greet" || got.Description != "says hello" {
		t.Errorf("prompt offered as %q (%q), want a_greet with the upstream's description", got.Name, got.Description)
	}
	if p.Exposed() != p.Exposed() {
		t.Error("the prompt's offered definition is made again for each session")
	}
	if greet.Name != "greet" {
		t.Errorf("the upstream's prompt was renamed to %q", greet.Name)
	}

	for i, want := range []struct {
		uri string
		def *mcp.Resource
	}{{"repo://readme", readmeA}, {gatewayURI("b", "repo://readme"), readmeB}} {
		r := v.Resources[i]
		got := r.Exposed()
		if got.URI != want.uri || r.URI != want.uri {
			t.Errorf("resource %d offered at %q (view: %q), want %q", i, got.URI, r.URI, want.uri)
		}
		if want.def.URI != "repo://readme" {
			t.Errorf("the upstream's resource %d was moved to %q", i, want.def.URI)
		}
		if (got == want.def) != (want.uri == "repo://readme") {
			t.Errorf("resource %d: offered definition is the upstream's: %v, want it only where the URI is the upstream's", i, got == want.def)
		}
		if r.Exposed() != got {
			t.Errorf("resource %d's offered definition is made again for each session", i)
		}
	}
	for i, want := range []string{"file:///{path}", gatewayURI("b", "file:///{path}")} {
		tm := v.Templates[i]
		if got := tm.Exposed(); got.URITemplate != want || tm.Exposed() != got {
			t.Errorf("template %d offered as %q (made once: %v), want %q", i, got.URITemplate, tm.Exposed() == got, want)
		}
	}
	if tmplA.URITemplate != "file:///{path}" || tmplB.URITemplate != "file:///{path}" {
		t.Errorf("the upstream's templates were changed: %q, %q", tmplA.URITemplate, tmplB.URITemplate)
	}
}
