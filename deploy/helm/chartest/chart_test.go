// Package chartest tests the Helm chart in deploy/helm/mcpgw: rendered by
// Helm's own library (as `helm template` renders it), compared with golden
// files, linted by Helm's lint package, and its objects decoded strictly
// into the Kubernetes API's types. It is a module of its own so that Helm
// and the Kubernetes libraries stay out of mcpgw's; it uses mcpgw's
// registry from this checkout (a replace in go.mod), so a dependency added
// to the registry needs `go mod tidy` here too.
//
//	cd deploy/helm/chartest && go test -count=1 ./...   # -update rewrites the golden files
//
// -count=1 because go test's cache does not notice the chart's files
// (outside this module) change.
package chartest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/release"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files with what the chart renders")

const (
	chartDir    = "../mcpgw"
	releaseName = "mcpgw"
	namespace   = "platform"
)

// kubeVersion is the cluster the chart is rendered for: fixed, so that
// the golden files do not change with the Helm library's default.
var kubeVersion = &chartutil.KubeVersion{Version: "v1.31.0", Major: "1", Minor: "31"}

// cases are the golden files: the chart's defaults, and three replicas in
// team mode (OpenID Connect, Redis, a ServiceMonitor).
var cases = []struct{ name, values string }{
	{"default", ""},
	{"team", "testdata/team-values.yaml"},
}

func readValues(t *testing.T, file string) map[string]any {
	t.Helper()
	if file == "" {
		return map[string]any{}
	}
	v, err := chartutil.ReadValuesFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// render is `helm template mcpgw deploy/helm/mcpgw -n platform -f values`.
func render(t *testing.T, vals map[string]any) (*release.Release, error) {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	in := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	in.ClientOnly, in.DryRun, in.Replace = true, true, true
	in.ReleaseName, in.Namespace = releaseName, namespace
	in.KubeVersion = kubeVersion
	return in.Run(ch, vals)
}

func mustRender(t *testing.T, vals map[string]any) *release.Release {
	t.Helper()
	rel, err := render(t, vals)
	if err != nil {
		t.Fatalf("rendering the chart: %v", err)
	}
	return rel
}

func TestGolden(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := mustRender(t, readValues(t, tc.values)).Manifest
			golden := filepath.Join("testdata", tc.name+".golden.yaml")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("the chart renders otherwise than %s (go test -update rewrites it):\n%s", golden, lineDiff(string(want), got))
			}
		})
	}
}

// TestLint runs Helm's linter (Chart.yaml, values, every template rendered
// and its objects' names, selectors and API versions) with each golden
// case's values. The one message allowed is the icon Chart.yaml lacks.
func TestLint(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := lint.AllWithKubeVersion(chartDir, readValues(t, tc.values), namespace, kubeVersion)
			var got []string
			for _, m := range l.Messages {
				got = append(got, m.Error())
			}
			want := []string{"[INFO] Chart.yaml: icon is recommended"}
			if !slices.Equal(got, want) {
				t.Errorf("lint messages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if l.HighestSeverity != support.InfoSev {
				t.Errorf("lint's highest severity %d, want info (%d)", l.HighestSeverity, support.InfoSev)
			}
		})
	}
}

// objects are the rendered manifest's objects, decoded strictly into the
// Kubernetes API's types: a misspelt or misplaced field fails.
type objects struct {
	Deployment     *appsv1.Deployment
	Service        *corev1.Service
	ConfigMap      *corev1.ConfigMap
	PDB            *policyv1.PodDisruptionBudget
	HPA            *autoscalingv2.HorizontalPodAutoscaler
	ServiceMonitor map[string]any
	Kinds          []string
}

func decode(t *testing.T, manifest string) objects {
	t.Helper()
	var o objects
	for _, doc := range docSep.Split(manifest, -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var meta struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("a rendered document is not YAML: %v\n%s", err, doc)
		}
		o.Kinds = append(o.Kinds, meta.Kind)
		var target any
		switch meta.APIVersion + " " + meta.Kind {
		case "apps/v1 Deployment":
			o.Deployment = &appsv1.Deployment{}
			target = o.Deployment
		case "v1 Service":
			o.Service = &corev1.Service{}
			target = o.Service
		case "v1 ConfigMap":
			o.ConfigMap = &corev1.ConfigMap{}
			target = o.ConfigMap
		case "policy/v1 PodDisruptionBudget":
			o.PDB = &policyv1.PodDisruptionBudget{}
			target = o.PDB
		case "autoscaling/v2 HorizontalPodAutoscaler":
			o.HPA = &autoscalingv2.HorizontalPodAutoscaler{}
			target = o.HPA
		case "monitoring.coreos.com/v1 ServiceMonitor":
			target = &o.ServiceMonitor
		default:
			t.Fatalf("unexpected object %s %s", meta.APIVersion, meta.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), target); err != nil {
			t.Fatalf("%s does not decode strictly: %v\n%s", meta.Kind, err, doc)
		}
	}
	return o
}

// docSep separates the documents of a manifest.
var docSep = regexp.MustCompile(`(?m)^---[ \t]*$`)

func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b bytes.Buffer
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %q\n  got  %q\n", i+1, wl, gl)
			if b.Len() > 4000 {
				break
			}
		}
	}
	return b.String()
}
