package registry

import (
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHiddenServerLeavesTheView: a server whose exclusions cover every
// name is in no part of the View — not a server, and none of its tools,
// prompts, resources or templates — while one that excludes some tools
// keeps its prompts and resources.
func TestHiddenServerLeavesTheView(t *testing.T) {
	listing := func() *Listing {
		return &Listing{Source: SourceLive, Tools: tools("echo", "read_file"), Instructions: "secret instructions",
			Prompts:   []*mcp.Prompt{{Name: "greet"}},
			Resources: []*mcp.Resource{{Name: "hello", URI: "test://hello"}},
			Templates: []*mcp.ResourceTemplate{{Name: "item", URITemplate: "test://item/{id}"}}}
	}
	for _, tc := range []struct {
		name     string
		srv      *Server
		settings []string // settings.excludeTools
		hidden   bool
	}{
		{"star", &Server{ExcludeTools: []string{"*"}}, nil, true},
		{"server glob", &Server{ExcludeTools: []string{"hid/*"}}, nil, true},
		{"prefix glob", &Server{ExcludeTools: []string{"hid_*"}}, nil, true},
		{"settings", &Server{}, []string{"hid_*"}, true},
		{"some tools", &Server{ExcludeTools: []string{"read_*"}}, nil, false},
		{"include list", &Server{IncludeTools: []string{"echo"}}, nil, false},
		{"nothing", &Server{}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.srv.Name, tc.srv.Enabled = "hid", true
			cfg := testConfig(tc.srv, &Server{Name: "vis", Enabled: true})
			cfg.Settings.ExcludeTools = tc.settings
			c := NewCatalog(cfg)
			c.SetListing("h-hid", listing())
			v := c.SetListing("h-vis", listing())
			if got := cfg.Settings.Hidden(tc.srv); got != tc.hidden {
				t.Fatalf("Hidden = %v, want %v", got, tc.hidden)
			}
			_, found := v.Server("hid")
			servers := 0
			for _, sv := range v.Servers {
				if sv.Server.Name == "hid" {
					servers++
				}
			}
			owned := func(server string) bool { return server == "hid" }
			prompts := slices.ContainsFunc(v.Prompts, func(p *Prompt) bool { return owned(p.Server) })
			resources := slices.ContainsFunc(v.Resources, func(r *Resource) bool { return owned(r.Server) })
			templates := slices.ContainsFunc(v.Templates, func(x *Template) bool { return owned(x.Server) })
			_, byPrompt := v.Prompt("hid/greet")
			// hid sorts first: its URIs are the plain ones unless it is gone.
			r, byURI := v.Resource("test://hello")
			byURI = byURI && r.Server == "hid"
			x, _, _ := v.TemplateFor("test://item/{id}", "test://item/1")
			tmpl := ""
			if x != nil {
				tmpl = x.Server
			}
			if tc.hidden {
				if found || servers != 0 || prompts || resources || templates || byPrompt || byURI || tmpl != "vis" {
					t.Errorf("hidden server in the view: server %v/%d, prompts %v, resources %v, templates %v, lookups %v %v %q",
						found, servers, prompts, resources, templates, byPrompt, byURI, tmpl)
				}
				if _, ok := v.Lookup("hid_echo"); ok {
					t.Error("a hidden server's tool was found")
				}
			} else if !found || !prompts || !resources || !templates || !byPrompt {
				t.Errorf("visible server missing: server %v, prompts %v, resources %v, templates %v", found, prompts, resources, templates)
			}
			if _, ok := v.Server("vis"); !ok || !slices.ContainsFunc(v.Prompts, func(p *Prompt) bool { return p.Server == "vis" }) {
				t.Error("the visible server lost its entries")
			}
		})
	}
}
