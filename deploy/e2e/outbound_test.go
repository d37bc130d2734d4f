package e2e

import "testing"

// TestSourcesRefuseSpecialAddresses adds URL sources naming addresses of the IANA special-purpose
// registries that embed or reach internal hosts: each is refused with 400 INVALID_URL. (Ports
// are checked by the dial hook: see pkg/outbound's TestDialRefusesOtherPorts.)
func TestSourcesRefuseSpecialAddresses(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, nil)
	for _, u := range []string{
		"https://[::7f00:1]/", "https://[::ffff:0:7f00:1]/", "https://[fec0::1]/", "https://[2001::1]/",
		"https://192.88.99.1/", "https://[3fff::1]/",
	} {
		env.Do(t, "POST", "/api/objects/"+hash+"/sources", key, map[string]any{"kind": "url", "url": u}).ExpectError(t, 400, "INVALID_URL")
	}
}
