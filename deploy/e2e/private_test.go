package e2e

import "testing"

// TestPrivateObjectIsHiddenFromNonOwners checks that only its owner learns that a private object
// exists: the public read, owner routes and associations answer 404 to anyone else, where a
// public object answers 200 or 403.
func TestPrivateObjectIsHiddenFromNonOwners(t *testing.T) {
	t.Parallel()
	env := Start(t)
	private, ownerKey := env.CreateObject(t, map[string]any{"visibility": "private"})
	public, publicKey := env.CreateObject(t, nil)
	_, otherKey := env.CreateObject(t, nil)

	env.Do(t, "GET", "/api/objects/"+private, "", nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "GET", "/api/objects/"+private, otherKey, nil).ExpectError(t, 404, "NOT_FOUND")
	if got := env.Do(t, "GET", "/api/objects/"+private, ownerKey, nil).Expect(t, 200).JSON(t)["visibility"]; got != "private" {
		t.Fatalf("the owner reads visibility %v", got)
	}
	env.Do(t, "GET", "/api/objects/"+public, "", nil).Expect(t, 200)

	for _, route := range []struct{ method, path string }{
		{"GET", "/keys"}, {"GET", "/svc-associations"}, {"POST", "/rotate-key"},
	} {
		env.Do(t, route.method, "/api/objects/"+private+route.path, otherKey, nil).ExpectError(t, 404, "NOT_FOUND")
		env.Do(t, route.method, "/api/objects/"+public+route.path, otherKey, nil).ExpectError(t, 403, "FORBIDDEN")
	}
	env.Do(t, "GET", "/api/objects/"+private+"/keys", ownerKey, nil).Expect(t, 200)

	// Its rules too: only message ingress accepts a private object's hash from anyone.
	env.Do(t, "GET", "/api/objects/"+private+"/rules", "", nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "GET", "/api/objects/"+private+"/rules", otherKey, nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "GET", "/api/objects/"+private+"/rules", ownerKey, nil).Expect(t, 200)
	env.Do(t, "GET", "/api/objects/"+public+"/rules", "", nil).Expect(t, 200)

	// Associating with a private object reveals neither it nor its current hash.
	env.Do(t, "POST", "/api/objects/"+public+"/svc-associations", publicKey, map[string]any{"peer_hash": private}).
		ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "POST", "/api/objects/"+private+"/svc-associations", ownerKey, map[string]any{"peer_hash": private}).Expect(t, 201)
}
