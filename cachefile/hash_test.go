package cachefile

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

type hashVectors struct {
	Adapter string            `json:"adapter"`
	Home    string            `json:"home"`
	Env     map[string]string `json:"env"`
	Vectors []struct {
		Name       string          `json:"name"`
		Definition json.RawMessage `json:"definition"`
		Hash       string          `json:"hash"`
		Canonical  string          `json:"canonical"`
		Error      string          `json:"error"`
	} `json:"vectors"`
}

func loadHashVectors(t testing.TB) hashVectors {
	t.Helper()
	data, err := os.ReadFile("testdata/hash-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v hashVectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Vectors) < 40 {
		t.Fatalf("only %d vectors in testdata/hash-vectors.json", len(v.Vectors))
	}
	return v
}

func (v hashVectors) env() Env {
	return Env{
		Home: v.Home,
		Lookup: func(name string) (string, bool) {
			s, ok := v.Env[name]
			return s, ok
		},
	}
}

// TestHashVectors checks Hash against computeServerHash of the npm package,
// run by testdata/gen-hash-vectors.mjs.
func TestHashVectors(t *testing.T) {
	v := loadHashVectors(t)
	env := v.env()
	for _, vec := range v.Vectors {
		t.Run(vec.Name, func(t *testing.T) {
			var id Identity
			if err := json.Unmarshal(vec.Definition, &id); err != nil {
				t.Fatalf("decoding definition %s: %v", vec.Definition, err)
			}
			got, err := HashEnv(id, env)
			if vec.Error != "" {
				if !errors.Is(err, ErrUnresolvable) {
					t.Fatalf("HashEnv = %q, %v; adapter threw %q, want ErrUnresolvable", got, err, vec.Error)
				}
				return
			}
			if err != nil {
				t.Fatalf("HashEnv: %v", err)
			}
			if c, _ := canonical(id, env); c != vec.Canonical {
				t.Errorf("canonical identity differs\n got: %s\nwant: %s", c, vec.Canonical)
			}
			if got != vec.Hash {
				t.Errorf("HashEnv = %s, adapter (%s) = %s", got, v.Adapter, vec.Hash)
			}
		})
	}
}

// TestHashLiteralIdentity checks that an Identity built in Go (not decoded)
// hashes like the same definition decoded from JSON when it has no
// explicitly empty strings.
func TestHashLiteralIdentity(t *testing.T) {
	v := loadHashVectors(t)
	env := v.env()
	f := false
	lit := Identity{
		Command:         "uvx",
		Args:            []string{"mcp-server"},
		Env:             map[string]string{"Z": "1", "A": "${TOKEN}"},
		Cwd:             "~/w",
		URL:             "https://${HOST}/mcp",
		Headers:         map[string]string{"H": "${API_KEY}"},
		Auth:            "bearer",
		BearerToken:     "${TOKEN}",
		BearerTokenEnv:  "API_KEY",
		ExposeResources: &f,
		IncludeTools:    []string{"a"},
		ExcludeTools:    []string{"b"},
		ProtocolVersion: "2026-07-28",
		Socket:          "/tmp/s",
	}
	got, err := HashEnv(lit, env)
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for _, vec := range v.Vectors {
		if vec.Name == "everything" {
			want = vec.Hash
		}
	}
	if want == "" || got != want {
		t.Fatalf("HashEnv(literal) = %s, want vector \"everything\" %s", got, want)
	}

	// "" is absent for a literal, present once decoded.
	var dec Identity
	if err := json.Unmarshal([]byte(`{"url":"https://mcp.example.com/mcp","bearerToken":""}`), &dec); err != nil {
		t.Fatal(err)
	}
	litEmpty := Identity{URL: "https://mcp.example.com/mcp"}
	hd, _ := HashEnv(dec, env)
	hl, _ := HashEnv(litEmpty, env)
	if hd == hl {
		t.Fatalf("explicit bearerToken \"\" hashed like an absent one")
	}
}

func TestHashUsesProcessEnvironment(t *testing.T) {
	t.Setenv("CACHEFILE_TEST_TOKEN", "abc")
	t.Setenv("HOME", "/home/someone")
	id := Identity{URL: "https://h/${CACHEFILE_TEST_TOKEN}", Cwd: "~/x"}
	want, err := HashEnv(id, Env{Home: "/home/someone", Lookup: func(n string) (string, bool) {
		if n == "CACHEFILE_TEST_TOKEN" {
			return "abc", true
		}
		return "", false
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := Hash(id); got != want {
		t.Fatalf("Hash = %s, want %s", got, want)
	}
	if got := Hash(Identity{URL: "https://${CACHEFILE_TEST_UNSET_VAR}/"}); got != "" {
		t.Fatalf("Hash of unresolvable URL = %q, want \"\"", got)
	}
}

func TestIdentityUnmarshalAuth(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		err      bool
	}{
		{`{"auth":false}`, AuthFalse, false},
		{`{"auth":"oauth"}`, "oauth", false},
		{`{"auth":null}`, "", false},
		{`{}`, "", false},
		{`{"auth":true}`, "", true},
	} {
		var id Identity
		err := json.Unmarshal([]byte(tc.in), &id)
		if (err != nil) != tc.err || id.Auth != tc.want {
			t.Errorf("%s: Auth=%q err=%v, want %q err=%v", tc.in, id.Auth, err, tc.want, tc.err)
		}
	}
}

func TestAppendJSNumber(t *testing.T) {
	for f, want := range map[float64]string{
		0: "0", 5000: "5000", 2500.5: "2500.5", 1e21: "1e+21", 1e20: "100000000000000000000",
		1e-7: "1e-7", 0.000001: "0.000001", -1.5: "-1.5", 123456789012: "123456789012",
	} {
		if got := string(appendJSNumber(nil, f)); got != want {
			t.Errorf("appendJSNumber(%v) = %s, want %s", f, got, want)
		}
	}
}

func TestCompareUTF16(t *testing.T) {
	keys := []string{"～", "😀", "z", "é", "Z", "", "a"}
	sortUTF16(keys)
	if got := strings.Join(keys, ","); got != ",Z,a,z,é,😀,～" {
		t.Fatalf("sorted = %s", got)
	}
}
