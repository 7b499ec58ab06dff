package registry

import (
	"strings"
	"testing"
)

// testEnv is the environment the valid-* fixtures are loaded with.
var testEnv = map[string]string{
	"TOKEN": "s3cret",
	"HOST":  "example.com",
	"HOME":  "/home/u",
}

func testOptions(env map[string]string) *LoadOptions {
	return &LoadOptions{Getenv: func(k string) string { return env[k] }, Home: "/home/u"}
}

// TestServerHashMatchesAdapter checks Server.Hash against hashes computed by
// pi-mcp-adapter 2.36.0's computeServerHash for the same file, with
// HOME=/home/u and the environment {TOKEN: "s3cret", HOST: "example.com"}.
func TestServerHashMatchesAdapter(t *testing.T) {
	want := map[string]string{
		"minimal":      "f0211144c2b2b29b578deb59dd0edc37fe366b5a902d0cf65d3b12d1a56bbda5",
		"stdio":        "aa41cf82f1ed497ddde481d180ab34b654e35f09b2e755f00aed2943c2cf55c5",
		"remote":       "75822da0f5c8a4aa4461ffb087e6f58fd547089f9bb93fece9648db1483e8ad0",
		"authfalse":    "6b20dfd3d937b2276ca57c038ada3d9314121b5ed3871bbf42896a73c388c44f",
		"bearer":       "b224bf2f3fa82725a73eddb294117ffd34b94c1608f1b1b1d1f42ec33dfd5686",
		"escapes":      "e72bf2e1dc5ed9b012fcd8eb42dff542cd16cd797e1edd2b4669ea3bee524cf9",
		"adapter-only": "382f38d0532cc0e741e8d1d0d2c64f086019af1b118c5cac60f76d38e3919301",
		"empty-cwd":    "83987a495cb4498046054bb2dec3bb457bb07d8054e13601dc6b0778c30993a0",
	}
	cfg, err := Load("testdata/valid-hash.json", testOptions(testEnv))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != len(want) {
		t.Errorf("got %d servers, want %d", len(cfg.Servers), len(want))
	}
	for name, h := range want {
		s := cfg.Servers[name]
		if s == nil {
			t.Errorf("server %q missing", name)
			continue
		}
		if s.Hash != h {
			t.Errorf("%s: Hash = %s, want %s", name, s.Hash, h)
		}
	}
}

// TestServerHashMalformedIgnoredFields: fields mcpgw ignores but the adapter
// hashes are left out of the hash when malformed, instead of failing the
// load; the hash is then that of the definition without them.
func TestServerHashMalformedIgnoredFields(t *testing.T) {
	cfg, err := Parse([]byte(`{"mcpServers": {
		"a": {"command": "x", "protocolVersion": 3, "socket": ["no"]},
		"b": {"command": "x"},
	}}`), "inline.json", testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	a, b := cfg.Servers["a"], cfg.Servers["b"]
	if a == nil || b == nil || a.Hash != b.Hash || len(a.Hash) != 64 {
		t.Errorf("hashes %+v, %+v: want equal", a, b)
	}
	want := "mcpServers.a.protocolVersion: not supported by mcpgw; ignored\n" +
		"mcpServers.a.socket: not supported by mcpgw; ignored"
	if got := strings.Join(cfg.Warnings, "\n"); got != want {
		t.Errorf("warnings:\n%s\nwant:\n%s", got, want)
	}
}
