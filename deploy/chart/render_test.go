package chart

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/svcdev/svc/deploy/internal/suite"
)

const (
	chartDir    = "../helm/svc"
	releaseName = "svc"
	namespace   = "svc-test"
	// minKubeVersion is the oldest Kubernetes the chart declares support for (Chart.yaml kubeVersion).
	minKubeVersion = "v1.30.0"
)

// manifests are the objects of one rendered release, decoded into the Kubernetes API types.
type manifests struct {
	deployments     []*appsv1.Deployment
	services        []*corev1.Service
	hpas            []*autoscalingv2.HorizontalPodAutoscaler
	pdbs            []*policyv1.PodDisruptionBudget
	networkPolicies []*networkingv1.NetworkPolicy
	ingresses       []*networkingv1.Ingress
	secrets         []*corev1.Secret
	serviceAccounts []*corev1.ServiceAccount
	notes           string
}

// secretValues are the backend addresses a release needs unless it names an existing Secret.
func secretValues() map[string]any {
	return map[string]any{"secret": map[string]any{
		"mongoURI":     "mongodb://mongo:27017",
		"kafkaBrokers": "kafka-0:9092,kafka-1:9092",
		"redisURL":     "redis://redis:6379/0",
	}}
}

// withValues returns a copy of base with each dotted path of sets set to its value, creating the
// maps on the way, as --set does.
func withValues(base map[string]any, sets map[string]any) map[string]any {
	out := deepCopy(base)
	for path, value := range sets {
		m := out
		keys := strings.Split(path, ".")
		for _, key := range keys[:len(keys)-1] {
			next, ok := m[key].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[key] = next
			}
			m = next
		}
		m[keys[len(keys)-1]] = value
	}
	return out
}

func deepCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = deepCopy(sub)
		}
		out[k] = v
	}
	return out
}

func kubeVersion(t *testing.T) *chartutil.KubeVersion {
	t.Helper()
	kv, err := chartutil.ParseKubeVersion(minKubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// lintChart runs helm lint and fails on any warning or error, as `helm lint --strict` does.
func lintChart(t *testing.T, values map[string]any) {
	t.Helper()
	linter := lint.AllWithKubeVersion(chartDir, values, namespace, kubeVersion(t))
	for _, msg := range linter.Messages {
		if msg.Severity >= support.WarningSev {
			t.Errorf("helm lint: %s", msg)
		}
	}
}

// render runs what `helm template` runs, with values over the chart's values.yaml.
func render(t *testing.T, values map[string]any) (string, string, error) {
	t.Helper()
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	install := action.NewInstall(&action.Configuration{})
	install.DryRun = true
	install.ClientOnly = true
	install.Replace = true
	install.ReleaseName = releaseName
	install.Namespace = namespace
	install.KubeVersion = kubeVersion(t)
	rel, err := install.Run(chrt, values)
	if err != nil {
		return "", "", err
	}
	return rel.Manifest, rel.Info.Notes, nil
}

// mustRender renders values and decodes every manifest strictly.
func mustRender(t *testing.T, values map[string]any) *manifests {
	t.Helper()
	manifest, notes, err := render(t, values)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	m, err := decode(manifest)
	if err != nil {
		t.Fatal(err)
	}
	m.notes = notes
	return m
}

// decode splits a rendered release into its documents and decodes each one strictly into the
// Kubernetes API type of its kind: an unknown field or an unknown kind is an error.
func decode(manifest string) (*manifests, error) { return decodeIn(manifest, namespace) }

// decodeIn decodes a release rendered into namespace ns.
func decodeIn(manifest, ns string) (*manifests, error) {
	docs := releaseutil.SplitManifests(manifest)
	m := &manifests{}
	for _, key := range slices.Sorted(maps.Keys(docs)) {
		doc := docs[key]
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		obj, add := m.slot(meta)
		if obj == nil {
			return nil, fmt.Errorf("%s: the chart renders %s %s, which this test does not know", key, meta.APIVersion, meta.Kind)
		}
		if err := decodeStrict(doc, obj); err != nil {
			return nil, fmt.Errorf("%s %s: %w\n%s", meta.Kind, source(doc), err, doc)
		}
		if err := validMeta(meta.Kind, obj, ns); err != nil {
			return nil, fmt.Errorf("%s %s: %w", meta.Kind, obj.GetName(), err)
		}
		add()
	}
	return m, nil
}

// decodeStrict decodes one YAML document as the API server does with strict field validation:
// field names match case-sensitively, and unknown or duplicate fields are errors.
func decodeStrict(doc string, obj any) error {
	data, err := yaml.YAMLToJSONStrict([]byte(doc))
	if err != nil {
		return err
	}
	strictErrs, err := kjson.UnmarshalStrict(data, obj)
	if err != nil {
		return err
	}
	return errors.Join(strictErrs...)
}

// source returns the "# Source:" line Helm puts on every document.
func source(doc string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(doc), "\n")
	return strings.TrimPrefix(line, "# Source: ")
}

// slot returns a new object of the kind meta names and the function that files it in m.
func (m *manifests) slot(meta metav1.TypeMeta) (metav1.Object, func()) {
	switch meta.GroupVersionKind().String() {
	case "apps/v1, Kind=Deployment":
		return into(&m.deployments)
	case "/v1, Kind=Service":
		return into(&m.services)
	case "autoscaling/v2, Kind=HorizontalPodAutoscaler":
		return into(&m.hpas)
	case "policy/v1, Kind=PodDisruptionBudget":
		return into(&m.pdbs)
	case "networking.k8s.io/v1, Kind=NetworkPolicy":
		return into(&m.networkPolicies)
	case "networking.k8s.io/v1, Kind=Ingress":
		return into(&m.ingresses)
	case "/v1, Kind=Secret":
		return into(&m.secrets)
	case "/v1, Kind=ServiceAccount":
		return into(&m.serviceAccounts)
	}
	return nil, nil
}

// into returns a new object of list's element type and the function that appends it to list.
func into[T any, P interface {
	*T
	metav1.Object
}](list *[]P) (metav1.Object, func()) {
	obj := P(new(T))
	return obj, func() { *list = append(*list, obj) }
}

// validMeta checks what the API server would refuse in an object's name, namespace and labels.
func validMeta(kind string, obj metav1.Object, ns string) error {
	nameErrs := validation.IsDNS1123Subdomain(obj.GetName())
	if kind == "Service" {
		nameErrs = validation.IsDNS1035Label(obj.GetName())
	}
	if len(nameErrs) > 0 {
		return fmt.Errorf("invalid name: %s", strings.Join(nameErrs, "; "))
	}
	if obj.GetNamespace() != ns {
		return fmt.Errorf("namespace %q, want the release namespace %q", obj.GetNamespace(), ns)
	}
	for key, value := range obj.GetLabels() {
		if errs := append(validation.IsQualifiedName(key), validation.IsValidLabelValue(value)...); len(errs) > 0 {
			return fmt.Errorf("label %s=%s: %s", key, value, strings.Join(errs, "; "))
		}
	}
	return nil
}

// chartServices returns the names of the services listed in the chart's values.yaml.
func chartServices(t *testing.T) []string {
	t.Helper()
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	services, ok := chrt.Values["services"].(map[string]any)
	if !ok {
		t.Fatal("values.yaml: services is not a map")
	}
	return slices.Sorted(maps.Keys(services))
}

// workspaceServices returns the services go.work lists, with the four every release holds.
func workspaceServices(t *testing.T) []string {
	t.Helper()
	root, err := suite.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	services, err := suite.Services(root)
	if err != nil {
		t.Fatal(err)
	}
	return services
}
