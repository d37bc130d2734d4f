// Package suite describes what deploy/ ships: the services (read from the repository's go.work)
// and the environment each of them must be given.
package suite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// Root returns the repository root: dir or the nearest directory above it that holds go.work.
func Root(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("suite root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("suite root: no go.work above the working directory")
		}
		dir = parent
	}
}

// Services returns, sorted, every module that the go.work at root uses except pkg and deploy,
// together with the services every deployment holds.
func Services(root string) ([]string, error) {
	path := filepath.Join(root, "go.work")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("suite services: %w", err)
	}
	work, err := modfile.ParseWork(path, data, nil)
	if err != nil {
		return nil, fmt.Errorf("suite services: %w", err)
	}
	// The services every deployment holds, whether or not go.work lists them yet.
	services := []string{Gateway, "identity-svc", "context-svc", "mailbox-svc"}
	for _, use := range work.Use {
		dir := filepath.ToSlash(filepath.Clean(use.Path))
		if strings.Contains(dir, "/") {
			return nil, fmt.Errorf("suite services: %s: every module is a top-level folder", use.Path)
		}
		if !slices.Contains([]string{"pkg", "deploy"}, dir) { // the modules that are not services
			services = append(services, dir)
		}
	}
	slices.Sort(services)
	return slices.Compact(services), nil
}

// URLEnv names the environment variable that holds a service's internal URL:
// context-svc → CONTEXT_URL.
func URLEnv(service string) string {
	name := strings.TrimSuffix(service, "-svc")
	return strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_URL"
}

// Gateway is the one service reachable from outside.
const Gateway = "gateway"

// SecretEnv returns the variables a service reads that hold credentials or backend addresses:
// deployments keep them in a Secret, never in plain values. Only the gateway gets the key that
// signs principals; the other services get its public key and the services' own key.
func SecretEnv(service string) []string {
	// The gateway has no database and publishes nothing: it gets neither address.
	if service == Gateway {
		return []string{"REDIS_URL", "GATEWAY_JWT_KEY"}
	}
	env := []string{"KAFKA_BROKERS", "MONGO_URI", "REDIS_URL", "GATEWAY_JWT_PUBLIC_KEY", "SERVICE_JWT_KEY"}
	if service == "identity-svc" {
		env = append(env, "PAYMENT_VOUCHER_SECRET", "SIGNING_KEYS_SECRET", "SIGNING_KEYS_SECRETS_OLD")
	}
	return env
}

// OptionalSecretEnv are the variables of SecretEnv that may be unset: a Secret need not hold
// them (SIGNING_KEYS_SECRETS_OLD, the earlier signing keys secrets, is set only while a rotation
// of SIGNING_KEYS_SECRET is under way).
func OptionalSecretEnv() []string { return []string{"SIGNING_KEYS_SECRETS_OLD"} }

// JWTEnv are the variables of SecretEnv that hold internal-token keys.
func JWTEnv() []string {
	return []string{"GATEWAY_JWT_KEY", "GATEWAY_JWT_PUBLIC_KEY", "SERVICE_JWT_KEY"}
}

// AllSecretEnv returns every variable that SecretEnv gives some service.
func AllSecretEnv() []string {
	all := append(SecretEnv(Gateway), SecretEnv("identity-svc")...)
	slices.Sort(all)
	return slices.Compact(all)
}

// Calls returns the services, among deployed, whose URL a service must be given: the gateway calls
// every other service, and every service calls identity-svc.
func Calls(service string, deployed []string) []string {
	var calls []string
	for _, other := range deployed {
		if other != service && other != Gateway && (service == Gateway || other == "identity-svc") {
			calls = append(calls, other)
		}
	}
	return calls
}
