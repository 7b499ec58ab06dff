package chartest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
)

// TestReadmeCommands: the two commands that start the README's "Team
// mode on Kubernetes" install a chart whose pods find the Secret the
// first one makes, with the config file the second one names.
func TestReadmeCommands(t *testing.T) {
	data, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Team mode on Kubernetes\n")
	if !ok {
		t.Fatal("README.md has no section \"Team mode on Kubernetes\"")
	}
	block, ok := strings.CutPrefix(strings.TrimLeft(section, "\n"), "```sh\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("the section does not start with a sh block")
	}
	lines := strings.Split(strings.TrimSpace(block), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d commands, want 2:\n%s", len(lines), block)
	}

	// kubectl create secret generic NAME --from-literal=KEY="…"
	secret := strings.Fields(lines[0])
	if len(secret) < 6 || strings.Join(secret[:4], " ") != "kubectl create secret generic" || !strings.HasPrefix(secret[5], "--from-literal=") {
		t.Fatalf("first command %q, want kubectl create secret generic NAME --from-literal=KEY=…", lines[0])
	}
	secretName := secret[4]
	secretKey, _, _ := strings.Cut(strings.TrimPrefix(secret[5], "--from-literal="), "=")

	// helm install RELEASE CHART [--set K=V | --set-file K=FILE]...
	install := strings.Fields(lines[1])
	if len(install) < 4 || install[0] != "helm" || install[1] != "install" {
		t.Fatalf("second command %q, want helm install RELEASE CHART ...", lines[1])
	}
	if install[3] != "deploy/helm/mcpgw" {
		t.Errorf("the command installs %s, not the chart in deploy/helm/mcpgw", install[3])
	}
	dir := t.TempDir()
	opts := values.Options{}
	for i := 4; i < len(install); i += 2 {
		if i+1 == len(install) {
			t.Fatalf("flag %s without a value", install[i])
		}
		switch flag, arg := install[i], install[i+1]; flag {
		case "--set":
			opts.Values = append(opts.Values, arg)
		case "--set-file":
			// The user's mcp.json, in the directory the command runs in.
			k, file, _ := strings.Cut(arg, "=")
			path := filepath.Join(dir, file)
			writeFile(t, path, `{"mcpServers": {"tickets": {"url": "http://tickets.platform.svc/mcp"}}}`)
			opts.FileValues = append(opts.FileValues, k+"="+path)
		default:
			t.Fatalf("flag %s: the test knows --set and --set-file", flag)
		}
	}
	vals, err := opts.MergeValues(getter.Providers{})
	if err != nil {
		t.Fatal(err)
	}
	rel, err := render(t, vals)
	if err != nil {
		t.Fatalf("the README's helm install fails: %v", err)
	}
	o := decode(t, rel.Manifest)
	c := container(t, o)
	tok := envMap(c)["MCPGW_TOKEN"]
	if tok.ValueFrom == nil || tok.ValueFrom.SecretKeyRef == nil ||
		tok.ValueFrom.SecretKeyRef.Name != secretName || tok.ValueFrom.SecretKeyRef.Key != secretKey {
		t.Errorf("the pod reads MCPGW_TOKEN from %+v, the first command makes Secret %s with key %s", tok.ValueFrom, secretName, secretKey)
	}
	if !strings.HasPrefix(c.Image, "REGISTRY/mcpgw:") {
		t.Errorf("image %s, want the repository the command sets", c.Image)
	}
	if !strings.Contains(o.ConfigMap.Data["mcp.json"], "http://tickets.platform.svc/mcp") {
		t.Errorf("the ConfigMap lacks the --set-file config:\n%s", o.ConfigMap.Data["mcp.json"])
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
