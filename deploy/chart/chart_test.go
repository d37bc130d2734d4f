// Package chart tests the Helm chart in deploy/helm/svc: it lints and renders the chart with Helm's
// own library and checks the rendered objects, decoded strictly into the Kubernetes API types.
package chart

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/svcdev/svc/deploy/internal/suite"
	"github.com/svcdev/svc/pkg/authn"
)

const (
	componentLabel = "app.kubernetes.io/component"
	gateway        = suite.Gateway
	containerPort  = 8080
	baseHost       = "svc.example.com" // the host of config.baseURL in values.yaml
)

// allEnabled returns the --set values that turn on every service listed in values.yaml.
func allEnabled(t *testing.T) map[string]any {
	t.Helper()
	sets := map[string]any{}
	for _, name := range chartServices(t) {
		sets["services."+name+".enabled"] = true
	}
	return sets
}

func TestChartLints(t *testing.T) {
	t.Parallel()
	lintChart(t, secretValues())
	lintChart(t, withValues(secretValues(), allEnabled(t)))
}

// TestDefaultRelease checks the release values.yaml installs: exactly the services of the workspace.
func TestDefaultRelease(t *testing.T) {
	t.Parallel()
	m := mustRender(t, secretValues())
	services := workspaceServices(t)
	checkRelease(t, m, services, secretName(t, m))
	checkAutoscaling(t, m, services, []string{"mailbox-svc", "webhook-svc"})
	if !strings.Contains(m.notes, "https://"+baseHost) {
		t.Errorf("NOTES.txt does not tell where the API is:\n%s", m.notes)
	}
}

// TestEveryServiceEnabled checks the release with every service of values.yaml turned on, the
// services not built yet included: each one deploys the day it exists.
func TestEveryServiceEnabled(t *testing.T) {
	t.Parallel()
	services := chartServices(t)
	for _, name := range workspaceServices(t) {
		if !slices.Contains(services, name) {
			t.Errorf("values.yaml has no entry in services for %s, which go.work lists", name)
		}
	}
	for _, name := range []string{"mailbox-svc", "webhook-svc"} {
		if !slices.Contains(services, name) {
			t.Errorf("values.yaml has no entry in services for %s", name)
		}
	}
	m := mustRender(t, withValues(secretValues(), allEnabled(t)))
	checkRelease(t, m, services, secretName(t, m))
	checkAutoscaling(t, m, services, []string{"mailbox-svc", "webhook-svc"})
}

// TestOptInAutoscaling checks that any service can opt in to an HPA, and that a service with one
// leaves its replica count to it.
func TestOptInAutoscaling(t *testing.T) {
	t.Parallel()
	m := mustRender(t, withValues(secretValues(), map[string]any{
		"services.gateway.autoscaling.enabled":     true,
		"services.mailbox-svc.autoscaling.enabled": false,
		"services.webhook-svc.autoscaling.enabled": false,
	}))
	checkAutoscaling(t, m, workspaceServices(t), []string{gateway})
}

// TestIngressTrustedProxies sets the Ingress controller's CIDRs: the gateway, and only the
// gateway, trusts them.
func TestIngressTrustedProxies(t *testing.T) {
	t.Parallel()
	m := mustRender(t, withValues(secretValues(), map[string]any{"ingress.trustedProxies": []any{"10.0.0.0/8", "fd00::/8"}}))
	for _, d := range m.deployments {
		got, want := envValue(containerOf(t, d), "TRUSTED_PROXIES"), ""
		if d.Name == releaseName+"-"+gateway {
			want = "10.0.0.0/8,fd00::/8"
		}
		if got != want {
			t.Errorf("%s: TRUSTED_PROXIES = %q, want %q", d.Name, got, want)
		}
	}
}

func TestExistingSecret(t *testing.T) {
	t.Parallel()
	m := mustRender(t, map[string]any{"secret": map[string]any{"existingSecret": "svc-credentials"}})
	if len(m.secrets) != 0 {
		t.Errorf("with secret.existingSecret the chart still renders Secret %s", m.secrets[0].Name)
	}
	checkRelease(t, m, workspaceServices(t), "svc-credentials")
}

// TestGeneratedSecret checks the keys the chart generates when values leave them empty.
func TestGeneratedSecret(t *testing.T) {
	t.Parallel()
	m := mustRender(t, secretValues())
	if len(m.secrets) != 1 {
		t.Fatalf("rendered %d Secrets, want 1", len(m.secrets))
	}
	data := m.secrets[0].Data
	seed, err := base64.StdEncoding.DecodeString(string(data["SERVICE_JWT_KEY"]))
	if err != nil || len(seed) != 32 {
		t.Errorf("generated SERVICE_JWT_KEY %q is not base64 of a 32-byte Ed25519 seed (err %v)", data["SERVICE_JWT_KEY"], err)
	}
	checkGatewayKeyPair(t, string(data["GATEWAY_JWT_KEY"]), string(data["GATEWAY_JWT_PUBLIC_KEY"]))
	if len(data["PAYMENT_VOUCHER_SECRET"]) < 32 {
		t.Errorf("generated PAYMENT_VOUCHER_SECRET is %d characters, want at least 32", len(data["PAYMENT_VOUCHER_SECRET"]))
	}
	if secret, err := base64.StdEncoding.DecodeString(string(data["SIGNING_KEYS_SECRET"])); err != nil || len(secret) != 32 {
		t.Errorf("generated SIGNING_KEYS_SECRET %q is not base64 of 32 bytes (err %v)", data["SIGNING_KEYS_SECRET"], err)
	}
	if _, ok := data["SIGNING_KEYS_SECRETS_OLD"]; ok {
		t.Errorf("SIGNING_KEYS_SECRETS_OLD is in the Secret though secret.signingKeysSecretsOld is empty")
	}
	if got := string(data["MONGO_URI"]); got != "mongodb://mongo:27017" {
		t.Errorf("MONGO_URI in the Secret = %q, want the value of secret.mongoURI", got)
	}

	key := base64.StdEncoding.EncodeToString(make([]byte, 32))
	gatewayKey := authn.GenerateSeed()
	k, err := authn.ParseSigningKey(gatewayKey)
	if err != nil {
		t.Fatal(err)
	}
	gatewayPublicKey := base64.StdEncoding.EncodeToString(k.Public())
	old := strings.Repeat("ab", 32) + "," + base64.StdEncoding.EncodeToString(make([]byte, 32))
	m = mustRender(t, withValues(secretValues(), map[string]any{"secret.serviceJWTKey": key,
		"secret.gatewayJWTKey": gatewayKey, "secret.gatewayJWTPublicKey": gatewayPublicKey, "secret.signingKeysSecretsOld": old}))
	for name, want := range map[string]string{"SERVICE_JWT_KEY": key, "GATEWAY_JWT_KEY": gatewayKey, "GATEWAY_JWT_PUBLIC_KEY": gatewayPublicKey,
		"SIGNING_KEYS_SECRETS_OLD": old} {
		if got := string(m.secrets[0].Data[name]); got != want {
			t.Errorf("%s = %q, want the value given, %q", name, got, want)
		}
	}
}

// checkGatewayKeyPair checks that the gateway's key and the public key the services get are one
// Ed25519 pair, read as the services read them: a token the gateway signs verifies.
func checkGatewayKeyPair(t *testing.T, key, public string) {
	t.Helper()
	k, err := authn.ParseSigningKey(key)
	if err != nil {
		t.Fatalf("GATEWAY_JWT_KEY: %v", err)
	}
	pub, err := authn.ParsePublicKey(public)
	if err != nil {
		t.Fatalf("GATEWAY_JWT_PUBLIC_KEY: %v", err)
	}
	service, err := authn.ParseSigningKey(authn.GenerateSeed())
	if err != nil {
		t.Fatal(err)
	}
	v, err := authn.NewVerifier(pub, service)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := k.Mint(authn.GatewayIssuer, "identity-svc", &authn.Principal{ObjectID: "obj_1"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(tok, "identity-svc"); err != nil {
		t.Errorf("a token signed with GATEWAY_JWT_KEY does not verify with GATEWAY_JWT_PUBLIC_KEY: %v", err)
	}
}

// TestRefusedValues checks that values which cannot work stop the install with a message naming
// the value to fix.
func TestRefusedValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"no MongoDB", withValues(secretValues(), map[string]any{"secret.mongoURI": ""}), "secret.mongoURI is required"},
		{"no Kafka", withValues(secretValues(), map[string]any{"secret.kafkaBrokers": ""}), "secret.kafkaBrokers is required"},
		{"no Redis", withValues(secretValues(), map[string]any{"secret.redisURL": ""}), "secret.redisURL is required"},
		{"short JWT seed", withValues(secretValues(), map[string]any{"secret.serviceJWTKey": base64.StdEncoding.EncodeToString(make([]byte, 16))}), "32-byte Ed25519 seed"},
		{"half a gateway key pair", withValues(secretValues(), map[string]any{"secret.gatewayJWTKey": authn.GenerateSeed()}), "go together"},
		{"grace period shorter than the drain", withValues(secretValues(), map[string]any{"pod.terminationGracePeriodSeconds": 25}), "must exceed pod.preStopSleepSeconds + config.shutdownTimeoutSeconds"},
		{"secret in plain env", withValues(secretValues(), map[string]any{"services.mailbox-svc.env.MONGO_URI": "mongodb://x"}), "MONGO_URI comes from the Secret"},
		{"HPA without CPU request", withValues(secretValues(), map[string]any{"services.mailbox-svc.resources.requests.cpu": nil}), "autoscaling needs resources.requests.cpu"},
		{"relative base URL", withValues(secretValues(), map[string]any{"config.baseURL": "svc.example.com"}), "baseURL"},
		{"unknown log level", withValues(secretValues(), map[string]any{"config.logLevel": "verbose"}), "logLevel"},
		{"misspelt key", withValues(secretValues(), map[string]any{"ingres.enabled": false}), "ingres"},
		{"misspelt service key", withValues(secretValues(), map[string]any{"services.mailbox-svc.replica": 3}), "replica"},
		{"incomplete service entry", withValues(secretValues(), map[string]any{"services.search-svc": map[string]any{"enabled": true}}), "search-svc"},
		{"Ingress without gateway", withValues(secretValues(), map[string]any{"services.gateway.enabled": false}), "ingress.enabled needs services.gateway.enabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := render(t, tc.values)
			if err == nil {
				t.Fatalf("rendered; want an error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}
