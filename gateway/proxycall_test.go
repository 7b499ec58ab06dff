package gateway

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpgw/mcpgw/gateway/dispatch"
)

var proxyCallSeeds = []string{
	`{"tool":"a_echo","args":{"message":"hi"}}`,
	`{ "args" : {"message":"hi"} , "tool" : "a_echo" }`,
	`{"tool":"a_echo"}`,
	`{"tool":"a_echo","args":null}`,
	`{"tool":"a_echo","args":[1,2]}`,
	`{"tool":"a_echo","args":"text"}`,
	`{"tool":"a\u005fecho","args":{}}`,
	`{"TOOL":"a_echo","args":{}}`,
	`{"Tool":"b_echo","tool":"a_echo","args":{}}`,
	`{"tool":"a_echo","tool":"b_echo"}`,
	`{"tool":"a_echo","args":{},"args":{"x":1}}`,
	`{"tool":"a_echo","search":"x"}`,
	`{"tool":"a_echo","limit":"x"}`,
	`{"t\u006fol":"a_echo"}`,
	`{"tool":5}`,
	"{\"tool\":\"\xd5\"}",
	`{"tool":"","args":{}}`,
	`{"search":"echo"}`,
	`{}`,
	`null`,
	``,
	`[]`,
	`{"tool":"a_echo","args":{"message":"hi"}`,
}

// The mcp tool's arguments read without decoding name the same tool and
// arguments as decoded, whenever they are read so.
func TestPlainProxyCall(t *testing.T) {
	plain := 0
	for _, s := range proxyCallSeeds {
		tool, args, ok := plainProxyCall([]byte(s))
		if !ok {
			continue
		}
		plain++
		dtool, dargs, dok := decodeProxyCall([]byte(s))
		if !dok || tool != dtool || !bytes.Equal(args, dargs) {
			t.Errorf("%s: read as %q %s; decoded as %q %s (ok %v)", s, tool, args, dtool, dargs, dok)
		}
	}
	// {tool, args} in either order, with or without args, and args of
	// any kind but null, an empty name too: six of the seeds.
	if plain != 6 {
		t.Errorf("%d seeds read without decoding; want 6", plain)
	}
	// And through the mode: the call is the named tool's, with its
	// arguments, by the proxy route.
	c := dispatch.Call{Name: mcpToolDef.Name, Args: []byte(proxyCallSeeds[0])}
	if !(proxyMode{}).fast(&c) || c.Name != "a_echo" || string(c.Args) != `{"message":"hi"}` || c.Route != dispatch.ViaProxy {
		t.Errorf("proxyMode.fast: %v %q %s route %v", c.Name != mcpToolDef.Name, c.Name, c.Args, c.Route)
	}
	for _, s := range []string{`{"search":"echo"}`, `{"tool":5}`, `{"TOOL":"a_echo"}`} {
		c := dispatch.Call{Name: mcpToolDef.Name, Args: []byte(s)}
		want := s == `{"TOOL":"a_echo"}` // decoded: keys match case-insensitively
		if got := (proxyMode{}).fast(&c); got != want {
			t.Errorf("proxyMode.fast(%s) = %v; want %v", s, got, want)
		}
	}
}

func FuzzPlainProxyCall(f *testing.F) {
	for _, s := range proxyCallSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		tool, args, ok := plainProxyCall(raw)
		if !ok || !json.Valid(raw) {
			return // decoded (or refused) as before
		}
		dtool, dargs, dok := decodeProxyCall(raw)
		if !dok || tool != dtool || !bytes.Equal(args, dargs) {
			t.Errorf("%q: read as %q %q; decoded as %q %q (ok %v)", raw, tool, args, dtool, dargs, dok)
		}
	})
}
