// Package compose tests deploy/compose/compose.yaml: the suite on real MongoDB, Kafka and Redis.
package compose

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/svcdev/svc/deploy/internal/suite"
)

// file is the part of the Compose format this test reads.
type file struct {
	Services map[string]service `json:"services"`
}

type service struct {
	Image string `json:"image"`
	Build *struct {
		Context    string            `json:"context"`
		Dockerfile string            `json:"dockerfile"`
		Args       map[string]string `json:"args"`
	} `json:"build"`
	Environment map[string]any `json:"environment"`
	Ports       []string       `json:"ports"`
	DependsOn   map[string]struct {
		Condition string `json:"condition"`
	} `json:"depends_on"`
	Healthcheck *struct {
		Test []string `json:"test"`
	} `json:"healthcheck"`
}

func (s service) env(key string) string {
	if v, ok := s.Environment[key]; ok && v != nil {
		return fmt.Sprint(v)
	}
	return ""
}

// backends are the images the suite runs on, by Compose service name.
func backends() map[string]string {
	return map[string]string{"mongo": "mongo:", "kafka": "apache/kafka:", "redis": "redis:"}
}

func load(t *testing.T) file {
	t.Helper()
	data, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f file
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return f
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := suite.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestServicesBuiltFromTheDockerfile checks that compose.yaml runs exactly the services of the
// workspace, each built from deploy/Dockerfile with its SERVICE, only the gateway published.
func TestServicesBuiltFromTheDockerfile(t *testing.T) {
	t.Parallel()
	f, root := load(t), repoRoot(t)
	want, err := suite.Services(root)
	if err != nil {
		t.Fatal(err)
	}
	var built []string
	for name, s := range f.Services {
		if s.Build == nil {
			continue
		}
		built = append(built, name)
		if ctx, _ := filepath.Abs(s.Build.Context); ctx != root {
			t.Errorf("%s: build context %s, want the repository root %s", name, ctx, root)
		}
		if _, err := os.Stat(filepath.Join(root, s.Build.Dockerfile)); s.Build.Dockerfile != "deploy/Dockerfile" || err != nil {
			t.Errorf("%s: dockerfile %q, want deploy/Dockerfile (%v)", name, s.Build.Dockerfile, err)
		}
		if s.Build.Args["SERVICE"] != name {
			t.Errorf("%s: build arg SERVICE=%q, want %q", name, s.Build.Args["SERVICE"], name)
		}
		if published := len(s.Ports) > 0; published != (name == suite.Gateway) {
			t.Errorf("%s: ports %v; only the gateway publishes one", name, s.Ports)
		}
	}
	slices.Sort(built)
	if !slices.Equal(built, want) {
		t.Errorf("compose.yaml builds %v, want the services of go.work %v", built, want)
	}
}

// TestBackends checks the real MongoDB, Kafka and Redis, and that every service waits for them.
func TestBackends(t *testing.T) {
	t.Parallel()
	f := load(t)
	for name, prefix := range backends() {
		s, ok := f.Services[name]
		switch {
		case !ok:
			t.Errorf("no %s service", name)
			continue
		case !strings.HasPrefix(s.Image, prefix) || strings.HasSuffix(s.Image, ":latest"):
			t.Errorf("%s: image %q, want a pinned %s… image", name, s.Image, prefix)
		case s.Healthcheck == nil || len(s.Healthcheck.Test) == 0:
			t.Errorf("%s has no healthcheck for services to wait on", name)
		}
	}
	for name := range f.Services {
		if strings.Contains(name, "zookeeper") {
			t.Errorf("service %s: Kafka runs in KRaft mode, without ZooKeeper", name)
		}
	}

	kafka := f.Services["kafka"]
	if roles := kafka.env("KAFKA_PROCESS_ROLES"); !strings.Contains(roles, "broker") || !strings.Contains(roles, "controller") {
		t.Errorf("kafka: KAFKA_PROCESS_ROLES=%q, want one KRaft node that is broker and controller", roles)
	}
	for name, s := range f.Services {
		if s.Build == nil {
			continue
		}
		for backend := range backends() {
			if s.DependsOn[backend].Condition != "service_healthy" {
				t.Errorf("%s does not wait for %s to be healthy", name, backend)
			}
		}
		// Clients connect to what the broker advertises, so the address given must be advertised.
		for _, broker := range strings.Split(s.env("KAFKA_BROKERS"), ",") {
			if !strings.Contains(kafka.env("KAFKA_ADVERTISED_LISTENERS"), "://"+broker) {
				t.Errorf("%s: KAFKA_BROKERS %s is not among the broker's advertised listeners %q", name, broker, kafka.env("KAFKA_ADVERTISED_LISTENERS"))
			}
		}
	}
}

// TestEnvironment checks that each service gets the variables it requires, pointing at services of
// the file: its backends and the services it calls.
func TestEnvironment(t *testing.T) {
	t.Parallel()
	f := load(t)
	var deployed []string
	for name, s := range f.Services {
		if s.Build != nil {
			deployed = append(deployed, name)
		}
	}
	for _, name := range deployed {
		s := f.Services[name]
		if !strings.HasPrefix(s.env("ADDR"), ":") {
			t.Errorf("%s: ADDR=%q, want :port on every interface", name, s.env("ADDR"))
		}
		for _, key := range suite.AllSecretEnv() {
			_, ok := s.Environment[key]
			if want := slices.Contains(suite.SecretEnv(name), key); ok != want {
				t.Errorf("%s: has %s = %v, want %v", name, key, ok, want)
			}
		}
		for key, backend := range map[string]string{"MONGO_URI": "mongo", "REDIS_URL": "redis", "KAFKA_BROKERS": "kafka"} {
			if !slices.Contains(suite.SecretEnv(name), key) {
				continue // a service that does not read it (the gateway has no database, no broker)
			}
			addr := s.env(key)
			if u, err := url.Parse(addr); err == nil && u.Host != "" {
				addr = u.Host
			}
			if host, _, _ := net.SplitHostPort(strings.Split(addr, ",")[0]); host != backend {
				t.Errorf("%s: %s=%q, want the %s service", name, key, s.env(key), backend)
			}
		}
		for _, key := range suite.JWTEnv() {
			if v, ok := s.Environment[key]; ok && !strings.HasPrefix(s.env(key), "${"+key+":?") {
				t.Errorf("%s: %s=%q, want it required from the caller's environment, never a key in the file", name, key, v)
			}
		}
		for _, other := range suite.Calls(name, deployed) {
			want := "http://" + other + f.Services[other].env("ADDR") // ADDR is ":port"
			if got := s.env(suite.URLEnv(other)); got != want {
				t.Errorf("%s: %s=%q, want %q", name, suite.URLEnv(other), got, want)
			}
		}
	}
}

// TestHeaderExportsRequiredVariables: every variable the file requires from the caller's
// environment (${NAME:?…}) is exported by the commands at the top of the file, so that running
// them as written starts the suite.
func TestHeaderExportsRequiredVariables(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	header, _, _ := strings.Cut(text, "\nname:")
	required := regexp.MustCompile(`\$\{([A-Z0-9_]+):\?`).FindAllStringSubmatch(text, -1)
	if len(required) == 0 {
		t.Fatal("compose.yaml requires no variable: the test no longer reads it right")
	}
	for _, m := range required {
		if !strings.Contains(header, "#   export "+m[1]+"=") {
			t.Errorf("compose.yaml requires %s, which the commands at its top do not export", m[1])
		}
	}
}
