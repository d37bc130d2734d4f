package e2e

import (
	"maps"
	"slices"
	"testing"

	"github.com/svcdev/svc/pkg/authn"
)

// TestOnlyTheGatewaySignsPrincipals: a service holds the services' key, not the gateway's. A token
// it signs claiming a principal (under its own name or the gateway's) is refused with 401 by every
// service, on internal and owner routes alike, while the gateway's token for the same principal,
// and a service's token without one, are accepted.
func TestOnlyTheGatewaySignsPrincipals(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, _ := env.CreateObject(t, nil)
	objectID := Str(t, env.Internal(t, "identity-svc", "GET", "/internal/v1/resolve/"+hash), "object_id")
	victim := &authn.Principal{ObjectID: objectID, Hash: hash, KeyID: "key_forged", Owner: true,
		Scopes: []string{authn.ScopeRead, authn.ScopeWrite, authn.ScopeMailbox}}
	target := &authn.Target{ObjectID: objectID, Hash: hash, Visibility: "public"}

	services := slices.Sorted(maps.Keys(env.Stack.ServiceURLs))
	if len(services) < 6 {
		t.Fatalf("the stack runs %v, want every service", services)
	}
	for _, svc := range services {
		for _, issuer := range []string{"mailbox-svc", authn.GatewayIssuer} {
			forged := env.mint(t, env.ServiceJWTKey, issuer, svc, victim, target)
			env.callService(t, svc, "GET", "/internal/v1/dead-events", forged).ExpectError(t, 401, "UNAUTHORIZED")
			if svc == "identity-svc" {
				env.callService(t, svc, "GET", "/api/objects/"+hash+"/keys", forged).ExpectError(t, 401, "UNAUTHORIZED")
			}
		}
		env.callService(t, svc, "GET", "/internal/v1/dead-events", env.mint(t, env.ServiceJWTKey, "mailbox-svc", svc, nil, nil)).Expect(t, 200)
		env.callService(t, svc, "GET", "/internal/v1/dead-events", env.mint(t, env.GatewayJWTKey, authn.GatewayIssuer, svc, victim, target)).Expect(t, 200)
	}
	// The gateway's token for the principal opens the owner route that the forged ones did not.
	env.callService(t, "identity-svc", "GET", "/api/objects/"+hash+"/keys", env.mint(t, env.GatewayJWTKey, authn.GatewayIssuer, "identity-svc", victim, target)).Expect(t, 200)
	// A service's token carries no principal, so an owner route refuses it too.
	env.callService(t, "identity-svc", "GET", "/api/objects/"+hash+"/keys", env.mint(t, env.ServiceJWTKey, "mailbox-svc", "identity-svc", nil, target)).ExpectError(t, 401, "UNAUTHORIZED")
}
