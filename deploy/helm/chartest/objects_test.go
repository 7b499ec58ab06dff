package chartest

import (
	"bytes"
	"encoding/json"
	"log"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// container is the Deployment's one container, after checks that hold
// for any values: non-root, read-only root, the probes, the volumes.
func container(t *testing.T, o objects) corev1.Container {
	t.Helper()
	d := o.Deployment
	if d == nil {
		t.Fatal("no Deployment rendered")
	}
	spec := d.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(spec.Containers))
	}
	c := spec.Containers[0]
	psc := spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != 65532 {
		t.Errorf("pod security context %+v, want runAsNonRoot as uid 65532 (the image's user)", psc)
	}
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container security context %+v, want a read-only root, no privilege escalation, every capability dropped", sc)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the pod mounts a service account token; mcpgw needs none, and its upstreams must not read one")
	}
	if spec.EnableServiceLinks == nil || *spec.EnableServiceLinks {
		t.Error("service links on: the Service named mcpgw would put MCPGW_* variables in the daemon's environment")
	}
	for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port.String() != "http" {
			t.Errorf("probe %+v, want GET /healthz on the http port", p)
		}
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 7332 {
		t.Errorf("ports %+v, want http on 7332", c.Ports)
	}
	wantArgs := []string{"serve", "--listen", ":7332", "--allow-remote", "--config", "/config/mcp.json",
		"--cache", "/data/mcp-cache.json", "--socket", "", "--log-format", "json", "--log-level", "info"}
	if !slices.Equal(c.Args, wantArgs) {
		t.Errorf("args %q, want %q", c.Args, wantArgs)
	}
	if c.Command != nil {
		t.Errorf("command %q: the image's entrypoint (tini, then mcpgw) must stay", c.Command)
	}
	// Every directory mcpgw or an upstream writes is a volume; the
	// config's is a ConfigMap mounted whole (not subPath, which the
	// kubelet never updates).
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m
		if m.SubPath != "" {
			t.Errorf("mount %s uses subPath %s", m.MountPath, m.SubPath)
		}
	}
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	for path, kind := range map[string]string{"/config": "configMap", "/data": "emptyDir", "/tmp": "emptyDir"} {
		m, ok := mounts[path]
		if !ok {
			t.Errorf("nothing mounted at %s", path)
			continue
		}
		v := vols[m.Name]
		if got := volumeKind(v); got != kind {
			t.Errorf("%s is a %s volume, want %s", path, got, kind)
		}
		if m.ReadOnly != (path == "/config") {
			t.Errorf("%s mounted readOnly=%v", path, m.ReadOnly)
		}
	}
	env := envMap(c)
	for k, want := range map[string]string{"XDG_STATE_HOME": "/data", "XDG_CACHE_HOME": "/data/cache", "npm_config_cache": "/data/npm"} {
		if got := env[k].Value; got != want {
			t.Errorf("env %s=%q, want %q", k, got, want)
		}
	}
	return c
}

func volumeKind(v corev1.Volume) string {
	switch {
	case v.ConfigMap != nil:
		return "configMap"
	case v.EmptyDir != nil:
		return "emptyDir"
	}
	return "unknown"
}

func envMap(c corev1.Container) map[string]corev1.EnvVar {
	m := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		m[e.Name] = e
	}
	return m
}

// mcpJSON is the ConfigMap's mcp.json, decoded.
func mcpJSON(t *testing.T, o objects) map[string]any {
	t.Helper()
	if o.ConfigMap == nil {
		t.Fatal("no ConfigMap rendered")
	}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(o.ConfigMap.Data["mcp.json"]), &cfg); err != nil {
		t.Fatalf("mcp.json in the ConfigMap is not JSON: %v\n%s", err, o.ConfigMap.Data["mcp.json"])
	}
	return cfg
}

func TestDefaultObjects(t *testing.T) {
	o := decode(t, mustRender(t, nil).Manifest)
	if want := []string{"PodDisruptionBudget", "ConfigMap", "Service", "Deployment"}; !slices.Equal(o.Kinds, want) {
		t.Errorf("kinds %v, want %v", o.Kinds, want)
	}
	c := container(t, o)
	if got := *o.Deployment.Spec.Replicas; got != 1 {
		t.Errorf("replicas %d, want 1", got)
	}
	if c.Image != "mcpgw:0.1.0-dev" {
		t.Errorf("image %s, want mcpgw:0.1.0-dev (the chart's appVersion)", c.Image)
	}
	// Outside team mode the token comes from the Secret the README's
	// first command creates.
	tok := envMap(c)["MCPGW_TOKEN"]
	if tok.ValueFrom == nil || tok.ValueFrom.SecretKeyRef == nil ||
		tok.ValueFrom.SecretKeyRef.Name != "mcpgw-token" || tok.ValueFrom.SecretKeyRef.Key != "token" {
		t.Errorf("MCPGW_TOKEN %+v, want Secret mcpgw-token, key token", tok)
	}
	if got := o.Deployment.Spec.Template.Spec.Volumes[0].ConfigMap.Name; got != "mcpgw" || o.ConfigMap.Name != "mcpgw" {
		t.Errorf("config volume names ConfigMap %s, rendered %s; want mcpgw for both", got, o.ConfigMap.Name)
	}
	if cfg := mcpJSON(t, o); !reflect.DeepEqual(cfg, map[string]any{"mcpServers": map[string]any{}}) {
		t.Errorf("mcp.json %v, want no servers and no team block", cfg)
	}
	if p := o.Service.Spec.Ports; len(p) != 1 || p[0].Port != 7332 || p[0].TargetPort.String() != "http" {
		t.Errorf("service ports %+v", p)
	}
	if !reflect.DeepEqual(o.Service.Spec.Selector, o.Deployment.Spec.Selector.MatchLabels) ||
		!reflect.DeepEqual(o.PDB.Spec.Selector.MatchLabels, o.Deployment.Spec.Selector.MatchLabels) {
		t.Errorf("selectors differ: service %v, pdb %v, deployment %v", o.Service.Spec.Selector, o.PDB.Spec.Selector.MatchLabels, o.Deployment.Spec.Selector.MatchLabels)
	}
	if o.PDB.Spec.MaxUnavailable == nil || o.PDB.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("pdb maxUnavailable %v, want 1", o.PDB.Spec.MaxUnavailable)
	}
}

func TestTeamObjects(t *testing.T) {
	rel := mustRender(t, readValues(t, "testdata/team-values.yaml"))
	o := decode(t, rel.Manifest)
	if want := []string{"PodDisruptionBudget", "ConfigMap", "Service", "Deployment", "ServiceMonitor"}; !slices.Equal(o.Kinds, want) {
		t.Errorf("kinds %v, want %v", o.Kinds, want)
	}
	c := container(t, o)
	if got := *o.Deployment.Spec.Replicas; got != 3 {
		t.Errorf("replicas %d, want 3", got)
	}
	if c.Image != "registry.example.com/platform/mcpgw:v0.2.0" {
		t.Errorf("image %s", c.Image)
	}
	// In team mode OpenID Connect tokens replace the shared one: a
	// client's JWT would not match it.
	if _, ok := envMap(c)["MCPGW_TOKEN"]; ok {
		t.Error("MCPGW_TOKEN set in team mode")
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef == nil || c.EnvFrom[0].SecretRef.Name != "mcpgw-upstreams" {
		t.Errorf("envFrom %+v, want Secret mcpgw-upstreams", c.EnvFrom)
	}
	cfg := mcpJSON(t, o)
	wantTeam := map[string]any{
		"issuer": "https://login.example.com/realms/eng", "audience": "mcpgw",
		"groupsClaim": "groups", "store": "redis://mcpgw-redis.platform.svc:6379/0",
	}
	if !reflect.DeepEqual(cfg["team"], wantTeam) {
		t.Errorf("team block %v, want %v", cfg["team"], wantTeam)
	}
	gh, _ := cfg["mcpServers"].(map[string]any)["github"].(map[string]any)
	if auth := gh["headers"].(map[string]any)["Authorization"]; auth != "Bearer ${GITHUB_TOKEN}" {
		t.Errorf("github's Authorization header %q: ${GITHUB_TOKEN} must reach mcpgw as written", auth)
	}
	sm := o.ServiceMonitor
	meta := sm["metadata"].(map[string]any)
	if meta["labels"].(map[string]any)["release"] != "prometheus" {
		t.Errorf("ServiceMonitor labels %v, want release: prometheus among them", meta["labels"])
	}
	ep := sm["spec"].(map[string]any)["endpoints"].([]any)[0].(map[string]any)
	if ep["port"] != "http" || ep["path"] != "/metrics" {
		t.Errorf("ServiceMonitor endpoint %v, want /metrics on http", ep)
	}
	sel := sm["spec"].(map[string]any)["selector"].(map[string]any)["matchLabels"].(map[string]any)
	for k, v := range sel {
		if o.Service.Labels[k] != v {
			t.Errorf("ServiceMonitor selects %s=%v, which the Service's labels lack", k, v)
		}
	}
	for _, want := range []string{"https://login.example.com/realms/eng", "mcpgw.platform.svc:7332/mcp"} {
		if !strings.Contains(rel.Info.Notes, want) {
			t.Errorf("NOTES lack %q:\n%s", want, rel.Info.Notes)
		}
	}
}

// TestAutoscaling: with an HPA the Deployment leaves replicas to it.
func TestAutoscaling(t *testing.T) {
	vals := readValues(t, "testdata/team-values.yaml")
	vals["autoscaling"] = map[string]any{"enabled": true, "minReplicas": 3, "maxReplicas": 9}
	o := decode(t, mustRender(t, vals).Manifest)
	if o.Deployment.Spec.Replicas != nil {
		t.Errorf("replicas %d set beside the HPA", *o.Deployment.Spec.Replicas)
	}
	h := o.HPA
	if h == nil {
		t.Fatal("no HorizontalPodAutoscaler")
	}
	if *h.Spec.MinReplicas != 3 || h.Spec.MaxReplicas != 9 || h.Spec.ScaleTargetRef.Kind != "Deployment" || h.Spec.ScaleTargetRef.Name != o.Deployment.Name {
		t.Errorf("HPA %+v", h.Spec)
	}
	if u := h.Spec.Metrics[0].Resource.Target.AverageUtilization; u == nil || *u != 70 {
		t.Errorf("HPA CPU target %v, want 70", u)
	}
}

// TestConfigText: mcp.json given as the file's text (--set-file) renders
// as the same map would, with the team block written over the file's.
func TestConfigText(t *testing.T) {
	text := `{"mcpServers": {"docs": {"url": "http://docs.platform.svc/mcp"}}, "team": {"userClaim": "email", "audience": "old"}}`
	vals := map[string]any{"config": text, "team": map[string]any{"issuer": "https://login.example.com", "audience": "mcpgw"}}
	// Helm logs a warning when a value is a table and its default is not:
	// config's default is a table, which text replaces without one.
	var logged bytes.Buffer
	log.SetOutput(&logged)
	defer log.SetOutput(os.Stderr)
	cfg := mcpJSON(t, decode(t, mustRender(t, vals).Manifest))
	mustRender(t, map[string]any{"config": map[string]any{"mcpServers": map[string]any{}}})
	if logged.Len() > 0 {
		t.Errorf("Helm logged:\n%s", logged.String())
	}
	want := map[string]any{
		"mcpServers": map[string]any{"docs": map[string]any{"url": "http://docs.platform.svc/mcp"}},
		"team":       map[string]any{"issuer": "https://login.example.com", "audience": "mcpgw", "userClaim": "email"},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("mcp.json %v\nwant %v", cfg, want)
	}
}

// TestExistingConfigMap: a ConfigMap of the user's replaces the chart's.
func TestExistingConfigMap(t *testing.T) {
	o := decode(t, mustRender(t, map[string]any{"existingConfigMap": "team-mcp"}).Manifest)
	if o.ConfigMap != nil {
		t.Error("the chart rendered its own ConfigMap beside existingConfigMap")
	}
	if got := o.Deployment.Spec.Template.Spec.Volumes[0].ConfigMap.Name; got != "team-mcp" {
		t.Errorf("config volume names %s, want team-mcp", got)
	}
}

// TestRefused: values that cannot work fail the render and say why.
func TestRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals map[string]any
		want string
	}{
		{"replicas without a store", map[string]any{"replicaCount": 3}, "replicaCount above 1 (or autoscaling) needs team.store"},
		{"autoscaling without a store", map[string]any{"autoscaling": map[string]any{"enabled": true}}, "replicaCount above 1 (or autoscaling) needs team.store"},
		{"store without issuer", map[string]any{"team": map[string]any{"store": "redis://r:6379"}}, "need team.issuer"},
		{"issuer without audience", map[string]any{"team": map[string]any{"issuer": "https://login.example.com"}}, "team.audience:"},
		{"store not redis", map[string]any{"team": map[string]any{"issuer": "https://i", "audience": "a", "store": "memcached://m"}}, "team.store: a redis:// or rediss:// URL"},
		{"no token outside team mode", map[string]any{"token": map[string]any{"existingSecret": ""}}, "token.existingSecret: outside team mode"},
		{"config text with comments", map[string]any{"config": "{\n// servers\n\"mcpServers\": {}}"}, "config: not a JSON object"},
		{"config a list", map[string]any{"config": []any{"a"}}, "at '/config': got array, want null or string or object"},
		{"a misspelt team value", map[string]any{"team": map[string]any{"isuer": "https://login.example.com"}}, "at '/team': additional properties 'isuer' not allowed"},
		{"an unknown log level", map[string]any{"logLevel": "verbose"}, "at '/logLevel': value must be one of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, tc.vals)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("render = %v, want an error with %q", err, tc.want)
			}
		})
	}
}
