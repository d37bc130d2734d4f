package chart

import (
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/svcdev/svc/deploy/internal/suite"
)

func secretName(t *testing.T, m *manifests) string {
	t.Helper()
	if len(m.secrets) != 1 {
		t.Fatalf("rendered %d Secrets, want 1", len(m.secrets))
	}
	return m.secrets[0].Name
}

// checkRelease checks everything a release of exactly these services must satisfy; the pods read
// the secret-backed variables from the Secret named secret.
func checkRelease(t *testing.T, m *manifests, services []string, secret string) {
	t.Helper()
	var deployed []string
	for _, d := range m.deployments {
		deployed = append(deployed, d.Labels[componentLabel])
	}
	slices.Sort(deployed)
	if !slices.Equal(deployed, services) {
		t.Errorf("Deployments for %v, want one for each of %v", deployed, services)
	}
	for _, d := range m.deployments {
		name := d.Labels[componentLabel]
		t.Run(name, func(t *testing.T) {
			pod := podOf(t, d)
			c := containerOf(t, d)
			checkProbes(t, c)
			checkSecurity(t, pod, c)
			checkDrain(t, pod, c)
			checkEnv(t, m, name, services, c, secret)
			checkService(t, m, d)
			checkDisruptionBudget(t, m, d)
			if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
				t.Errorf("no CPU or memory request: the scheduler and the HPA need both")
			}
		})
	}
	checkSecret(t, m, secret)
	checkOnlyGatewayExposed(t, m)
}

// podOf returns the pod template of d, after checking that d's selector picks it.
func podOf(t *testing.T, d *appsv1.Deployment) *corev1.PodSpec {
	t.Helper()
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		t.Fatalf("Deployment %s selector: %v", d.Name, err)
	}
	if sel.Empty() || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("Deployment %s: selector %s does not select its pod template %v", d.Name, sel, d.Spec.Template.Labels)
	}
	return &d.Spec.Template.Spec
}

// containerOf returns the service's container, after checking the port it listens on.
func containerOf(t *testing.T, d *appsv1.Deployment) *corev1.Container {
	t.Helper()
	containers := d.Spec.Template.Spec.Containers
	if len(containers) != 1 {
		t.Fatalf("Deployment %s has %d containers, want 1", d.Name, len(containers))
	}
	c := &containers[0]
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != containerPort {
		t.Errorf("container ports %+v, want one named http on %d", c.Ports, containerPort)
	}
	if addr := envValue(c, "ADDR"); addr != ":"+strconv.Itoa(containerPort) {
		t.Errorf("ADDR = %q, want :%d, the container port", addr, containerPort)
	}
	return c
}

func checkProbes(t *testing.T, c *corev1.Container) {
	t.Helper()
	for _, p := range []struct {
		kind  string
		probe *corev1.Probe
		path  string
	}{{"readiness", c.ReadinessProbe, "/readyz"}, {"liveness", c.LivenessProbe, "/healthz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("no HTTP %s probe", p.kind)
			continue
		}
		get := p.probe.HTTPGet
		if get.Path != p.path || get.Port != intstr.FromString("http") {
			t.Errorf("%s probe GET %s on port %s, want %s on the http port", p.kind, get.Path, get.Port.String(), p.path)
		}
	}
}

func checkSecurity(t *testing.T, pod *corev1.PodSpec, c *corev1.Container) {
	t.Helper()
	psc, sc := pod.SecurityContext, c.SecurityContext
	if psc == nil || sc == nil {
		t.Fatal("pod or container has no securityContext")
	}
	if !isTrue(sc.RunAsNonRoot) && !isTrue(psc.RunAsNonRoot) {
		t.Error("runAsNonRoot is not set")
	}
	if psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Error("pod runAsUser is not a non-root user")
	}
	if !isTrue(sc.ReadOnlyRootFilesystem) {
		t.Error("root filesystem is writable")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("privilege escalation is allowed")
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		t.Errorf("capabilities %+v, want ALL dropped and none added", sc.Capabilities)
	}
	seccomp := sc.SeccompProfile
	if seccomp == nil {
		seccomp = psc.SeccompProfile
	}
	if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("seccomp profile %+v, want RuntimeDefault", seccomp)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("the pod mounts a service account token it has no use for")
	}
}

// checkDrain checks that a pod terminated by Kubernetes gets to finish its SIGTERM handling: the
// preStop sleep (endpoints drain) plus SHUTDOWN_TIMEOUT fit in the grace period.
func checkDrain(t *testing.T, pod *corev1.PodSpec, c *corev1.Container) {
	t.Helper()
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
		t.Fatal("no preStop sleep: SIGTERM arrives while endpoints still route to the pod")
	}
	sleep := time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	shutdown, err := time.ParseDuration(envValue(c, "SHUTDOWN_TIMEOUT"))
	if err != nil {
		t.Fatalf("SHUTDOWN_TIMEOUT: %v", err)
	}
	if pod.TerminationGracePeriodSeconds == nil {
		t.Fatal("no terminationGracePeriodSeconds")
	}
	grace := time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
	if sleep <= 0 || grace <= sleep+shutdown {
		t.Errorf("grace period %s, preStop sleep %s, SHUTDOWN_TIMEOUT %s: want a sleep, and a grace period longer than both together", grace, sleep, shutdown)
	}
}

// checkEnv checks a service's environment: no variable twice, the credentials only from the
// Secret, and a URL for each service it calls that points at that service's Service.
func checkEnv(t *testing.T, m *manifests, name string, services []string, c *corev1.Container, secret string) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range c.Env {
		if seen[e.Name] {
			t.Errorf("env %s is set twice", e.Name)
		}
		seen[e.Name] = true
		// An empty value is most often a template reading a value that does not exist.
		if e.Value == "" && e.ValueFrom == nil && e.Name != "KAFKA_TOPIC_PREFIX" {
			t.Errorf("env %s is empty", e.Name)
		}
	}
	for _, key := range suite.AllSecretEnv() {
		want := slices.Contains(suite.SecretEnv(name), key)
		e := envVar(c, key)
		switch {
		case !want && e != nil:
			t.Errorf("env %s reaches %s, which has no use for it", key, name)
		case want && (e == nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil):
			t.Errorf("env %s is not read from a Secret", key)
		case want && (e.ValueFrom.SecretKeyRef.Name != secret || e.ValueFrom.SecretKeyRef.Key != key):
			t.Errorf("env %s reads %s/%s, want %s/%s", key, e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key, secret, key)
		case want && slices.Contains(suite.OptionalSecretEnv(), key) != (e.ValueFrom.SecretKeyRef.Optional != nil && *e.ValueFrom.SecretKeyRef.Optional):
			t.Errorf("env %s: optional %v, want %v (a Secret need not hold it)", key, e.ValueFrom.SecretKeyRef.Optional != nil, slices.Contains(suite.OptionalSecretEnv(), key))
		}
	}
	for _, other := range suite.Calls(name, services) {
		if envValue(c, suite.URLEnv(other)) == "" {
			t.Errorf("no %s: %s calls %s", suite.URLEnv(other), name, other)
		}
	}
	for _, e := range c.Env {
		if strings.HasSuffix(e.Name, "_URL") && e.Name != "BASE_URL" && e.ValueFrom == nil {
			checkServiceURL(t, m, e.Name, e.Value)
		}
	}
}

// checkServiceURL checks that an internal URL names a rendered Service on one of its ports.
func checkServiceURL(t *testing.T, m *manifests, env, raw string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" {
		t.Errorf("%s=%q is not an http URL", env, raw)
		return
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		host, port = u.Host, "80"
	}
	for _, s := range m.services {
		if s.Name != host {
			continue
		}
		for _, p := range s.Spec.Ports {
			if strconv.Itoa(int(p.Port)) == port {
				return
			}
		}
		t.Errorf("%s=%s: Service %s has no port %s", env, raw, host, port)
		return
	}
	t.Errorf("%s=%s: no Service %s in the release", env, raw, host)
}

// checkService checks that exactly one Service selects d's pods, only them, on the http port.
func checkService(t *testing.T, m *manifests, d *appsv1.Deployment) {
	t.Helper()
	var found []*corev1.Service
	for _, s := range m.services {
		if selects(s.Spec.Selector, d.Spec.Template.Labels) {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d Services select the pods of %s, want 1", len(found), d.Name)
	}
	s := found[0]
	if s.Spec.Selector[componentLabel] != d.Labels[componentLabel] {
		t.Errorf("Service %s selects pods of other services too: %v", s.Name, s.Spec.Selector)
	}
	if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].TargetPort != intstr.FromString("http") {
		t.Errorf("Service %s ports %+v, want one targeting the http port", s.Name, s.Spec.Ports)
	}
}

func checkDisruptionBudget(t *testing.T, m *manifests, d *appsv1.Deployment) {
	t.Helper()
	for _, pdb := range m.pdbs {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err == nil && !sel.Empty() && sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			if pdb.Spec.MaxUnavailable == nil && pdb.Spec.MinAvailable == nil {
				t.Errorf("PodDisruptionBudget %s sets no budget", pdb.Name)
			}
			return
		}
	}
	t.Error("no PodDisruptionBudget covers the pods")
}

// checkSecret checks that the Secret the chart creates holds every variable the pods read from it.
func checkSecret(t *testing.T, m *manifests, name string) {
	t.Helper()
	for _, s := range m.secrets {
		if s.Name != name {
			t.Errorf("Secret %s rendered, but the pods read %s", s.Name, name)
			continue
		}
		for _, key := range suite.AllSecretEnv() {
			if len(s.Data[key]) == 0 && !slices.Contains(suite.OptionalSecretEnv(), key) {
				t.Errorf("Secret %s has no %s", s.Name, key)
			}
		}
	}
}

// checkAutoscaling checks that exactly the services in scaled have an HPA, that it scales their
// Deployment on CPU, and that the Deployment then leaves the replica count to it.
func checkAutoscaling(t *testing.T, m *manifests, services, scaled []string) {
	t.Helper()
	targets := map[string]string{} // Deployment name → component
	for _, h := range m.hpas {
		ref := h.Spec.ScaleTargetRef
		if ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" {
			t.Errorf("HPA %s scales %s %s, want an apps/v1 Deployment", h.Name, ref.APIVersion, ref.Kind)
		}
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 1 || *h.Spec.MinReplicas > h.Spec.MaxReplicas {
			t.Errorf("HPA %s: minReplicas %v, maxReplicas %d", h.Name, h.Spec.MinReplicas, h.Spec.MaxReplicas)
		}
		if len(h.Spec.Metrics) == 0 || h.Spec.Metrics[0].Resource == nil || h.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU {
			t.Errorf("HPA %s does not scale on CPU", h.Name)
		}
		targets[ref.Name] = h.Labels[componentLabel]
	}
	for _, d := range m.deployments {
		name := d.Labels[componentLabel]
		_, hasHPA := targets[d.Name]
		delete(targets, d.Name)
		switch want := slices.Contains(scaled, name); {
		case want && !hasHPA:
			t.Errorf("%s has no HorizontalPodAutoscaler", name)
		case !want && hasHPA:
			t.Errorf("%s has a HorizontalPodAutoscaler it did not ask for", name)
		case hasHPA && d.Spec.Replicas != nil:
			t.Errorf("%s sets replicas although its HPA owns the count: every upgrade would reset it", name)
		case !hasHPA && d.Spec.Replicas == nil:
			t.Errorf("%s has neither replicas nor an HPA", name)
		}
	}
	for name := range targets {
		t.Errorf("an HPA scales Deployment %s, which the release does not render", name)
	}
	for _, name := range scaled {
		if !slices.Contains(services, name) {
			t.Errorf("%s should have an HPA but is not deployed", name)
		}
	}
}

// checkOnlyGatewayExposed checks that outside traffic can reach the gateway and nothing else:
// Services stay inside the cluster, the Ingress routes only to the gateway, and NetworkPolicies
// admit outside traffic to the gateway's pods only.
func checkOnlyGatewayExposed(t *testing.T, m *manifests) {
	t.Helper()
	var gatewaySvc *corev1.Service
	for _, s := range m.services {
		if s.Spec.Type != "" && s.Spec.Type != corev1.ServiceTypeClusterIP {
			t.Errorf("Service %s is of type %s: only the Ingress exposes the suite", s.Name, s.Spec.Type)
		}
		if s.Labels[componentLabel] == gateway {
			gatewaySvc = s
		}
	}
	if gatewaySvc == nil {
		t.Fatal("no Service for the gateway")
	}
	checkIngress(t, m, gatewaySvc)

	var gatewayPod map[string]string
	for _, d := range m.deployments {
		if d.Labels[componentLabel] == gateway {
			gatewayPod = d.Spec.Template.Labels
		}
	}
	for _, d := range m.deployments {
		name := d.Labels[componentLabel]
		isolated, outside, fromGateway := admission(m.networkPolicies, d.Spec.Template.Labels, gatewayPod)
		switch {
		case !isolated:
			t.Errorf("no NetworkPolicy isolates the pods of %s", name)
		case name == gateway && !outside:
			t.Error("NetworkPolicies keep outside traffic from the gateway")
		case name != gateway && outside:
			t.Errorf("NetworkPolicies admit outside traffic to %s", name)
		case name != gateway && !fromGateway:
			t.Errorf("NetworkPolicies keep the gateway from calling %s", name)
		}
	}
}

func checkIngress(t *testing.T, m *manifests, gatewaySvc *corev1.Service) {
	t.Helper()
	if len(m.ingresses) == 0 {
		t.Error("no Ingress for the gateway")
	}
	toGateway := func(where string, b *networkingv1.IngressBackend) {
		if b.Service == nil || b.Service.Name != gatewaySvc.Name {
			t.Errorf("Ingress %s routes to %+v, want only the gateway Service %s", where, b, gatewaySvc.Name)
			return
		}
		if b.Service.Port.Name != gatewaySvc.Spec.Ports[0].Name && b.Service.Port.Number != gatewaySvc.Spec.Ports[0].Port {
			t.Errorf("Ingress %s routes to port %+v, which the gateway Service does not have", where, b.Service.Port)
		}
	}
	for _, ing := range m.ingresses {
		if ing.Spec.DefaultBackend != nil {
			toGateway(ing.Name+" default backend", ing.Spec.DefaultBackend)
		}
		if len(ing.Spec.Rules) == 0 {
			t.Errorf("Ingress %s has no rules", ing.Name)
		}
		for _, rule := range ing.Spec.Rules {
			if rule.Host != baseHost {
				t.Errorf("Ingress %s host %q, want the host of config.baseURL %q", ing.Name, rule.Host, baseHost)
			}
			if rule.HTTP == nil {
				t.Errorf("Ingress %s rule for %s has no paths", ing.Name, rule.Host)
				continue
			}
			for _, path := range rule.HTTP.Paths {
				toGateway(ing.Name+" "+rule.Host+path.Path, &path.Backend)
			}
		}
	}
}

// admission reports, for pods with podLabels, whether some NetworkPolicy isolates them for ingress,
// whether the policies admit traffic from outside the release (any source, other namespaces, IP
// blocks), and whether they admit the gateway's pods.
func admission(policies []*networkingv1.NetworkPolicy, podLabels, gatewayPod map[string]string) (isolated, outside, fromGateway bool) {
	for _, np := range policies {
		if !selectsPods(np.Spec.PodSelector, podLabels) || !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
			continue
		}
		isolated = true
		for _, rule := range np.Spec.Ingress {
			if len(rule.From) == 0 {
				outside, fromGateway = true, true
			}
			for _, peer := range rule.From {
				if peer.IPBlock != nil || peer.NamespaceSelector != nil || peer.PodSelector == nil || !releaseOnly(*peer.PodSelector) {
					outside = true
				}
				if peer.PodSelector != nil && peer.NamespaceSelector == nil && selectsPods(*peer.PodSelector, gatewayPod) {
					fromGateway = true
				}
			}
		}
	}
	return isolated, outside, fromGateway
}

// releaseOnly reports whether a pod selector is confined to the pods of this release.
func releaseOnly(sel metav1.LabelSelector) bool {
	return sel.MatchLabels["app.kubernetes.io/instance"] == releaseName &&
		sel.MatchLabels["app.kubernetes.io/name"] != ""
}

func selectsPods(sel metav1.LabelSelector, podLabels map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(&sel)
	return err == nil && s.Matches(labels.Set(podLabels))
}

// selects reports whether a Service selector picks pods with podLabels (an empty one picks none).
func selects(selector, podLabels map[string]string) bool {
	return len(selector) > 0 && labels.SelectorFromSet(selector).Matches(labels.Set(podLabels))
}

func envVar(c *corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

func envValue(c *corev1.Container, name string) string {
	if e := envVar(c, name); e != nil {
		return e.Value
	}
	return ""
}

func isTrue(b *bool) bool { return b != nil && *b }
