package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"testing"

	"github.com/svcdev/svc/deploy/internal/preload"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// This file holds identity-svc's lists: their end-to-end tests through the gateway and the
// scale benchmark's "identity" phase.

func init() { scalePhases = append(scalePhases, identityPhase) }

// preloadIdentity stores objects in the suite's identity-svc database as creation and claim
// verification leave them (deploy/internal/preload), and returns them.
func preloadIdentity(tb testing.TB, env *Env, in []preload.Object) []preload.PreloadedObject {
	tb.Helper()
	out, err := preloadObjects(testkit.Backends(tb).MongoURI, env, in)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// preloadObjects is preloadIdentity on the store at uri, for any goroutine: it answers its error.
func preloadObjects(uri string, env *Env, in []preload.Object) ([]preload.PreloadedObject, error) {
	client, db, err := mongox.Connect(context.Background(), uri, env.Name+"_identity_svc")
	if err != nil {
		return nil, err
	}
	defer client.Disconnect(context.Background())
	return preload.Objects(context.Background(), db, in)
}

// listPages reads every page of a list route (path has a query string) and returns the values of
// field of each entry of field list, with the number of pages read.
func listPages(t *testing.T, env *Env, path, key, list, field string) ([]string, int) {
	t.Helper()
	var out []string
	cursor := ""
	for pages := 1; ; pages++ {
		p := path
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		body := env.Do(t, "GET", p, key, nil).Expect(t, 200).JSON(t)
		for _, e := range body[list].([]any) {
			out = append(out, e.(map[string]any)[field].(string))
		}
		next, _ := body["next_cursor"].(string)
		if next == "" {
			return out, pages
		}
		if pages > 50 {
			t.Fatalf("%s: paging does not end", path)
		}
		cursor = next
	}
}

// TestDirectoryPagesWithinABudget: the directory lists public objects newest first, filters by
// status and text, and a page reads at most a budget of entries (4 per entry asked for): a search
// that matches nothing, or only an object deeper than the budget, answers a short page with a
// next_cursor, and following it finds the match and ends. Forged cursors are 400.
func TestDirectoryPagesWithinABudget(t *testing.T) {
	t.Parallel()
	env := Start(t)
	needle, _ := env.CreateObject(t, map[string]any{"initial_llm_txt": "# A rare Needle\n"})
	hidden, _ := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Hidden needle\n", "visibility": "private"})
	var in []preload.Object
	for i := range 14 {
		in = append(in, preload.Object{InitialLLMTxt: fmt.Sprintf("# Plain %d\n", i), Verified: i%4 == 1, Private: i%7 == 3})
	}
	loaded := preloadIdentity(t, env, in)
	var public, verified, unclaimed []string // newest first
	for i := len(in) - 1; i >= 0; i-- {
		if in[i].Private {
			continue
		}
		public = append(public, loaded[i].Hash)
		if in[i].Verified {
			verified = append(verified, loaded[i].Hash)
		} else {
			unclaimed = append(unclaimed, loaded[i].Hash)
		}
	}
	public, unclaimed = append(public, needle), append(unclaimed, needle)

	if got, _ := listPages(t, env, "/api/directory?limit=3", "", "objects", "hash"); !slices.Equal(got, public) {
		t.Fatalf("directory %v, want newest first %v (hidden %s)", got, public, hidden)
	}
	if got, _ := listPages(t, env, "/api/directory?status=verified&limit=50", "", "objects", "hash"); !slices.Equal(got, verified) {
		t.Fatalf("verified %v, want %v", got, verified)
	}
	if got, _ := listPages(t, env, "/api/directory?status=unclaimed&limit=50", "", "objects", "hash"); !slices.Equal(got, unclaimed) {
		t.Fatalf("unclaimed %v, want %v", got, unclaimed)
	}
	for _, o := range env.Do(t, "GET", "/api/directory?status=verified", "", nil).Expect(t, 200).JSON(t)["objects"].([]any) {
		if o.(map[string]any)["mailbox_status"] != "claimed" {
			t.Fatalf("a verified object listed as %v", o)
		}
	}

	// limit 2 reads at most 8 entries; the needle is below 12 public objects and 2 private ones.
	first := env.Do(t, "GET", "/api/directory?q=needle&limit=2", "", nil).Expect(t, 200).JSON(t)
	if objs := first["objects"].([]any); len(objs) != 0 || first["next_cursor"] == nil {
		t.Fatalf("first page of a search deeper than its budget: %v", first)
	}
	if got, pages := listPages(t, env, "/api/directory?q=NEEDLE&limit=2", "", "objects", "hash"); !slices.Equal(got, []string{needle}) || pages < 2 {
		t.Fatalf("search found %v in %d pages, want only the public needle", got, pages)
	}
	none := env.Do(t, "GET", "/api/directory?q=nothing-matches&limit=2", "", nil).Expect(t, 200).JSON(t)
	if objs := none["objects"].([]any); len(objs) != 0 || none["next_cursor"] == nil {
		t.Fatalf("a search that matches nothing, past its budget: %v", none)
	}
	if got, pages := listPages(t, env, "/api/directory?q=nothing-matches&limit=2", "", "objects", "hash"); len(got) != 0 || pages < 2 {
		t.Fatalf("a search that matches nothing found %v in %d pages", got, pages)
	}
	within := env.Do(t, "GET", "/api/directory?q=nothing-matches", "", nil).Expect(t, 200).JSON(t)
	if objs := within["objects"].([]any); len(objs) != 0 || within["next_cursor"] != nil {
		t.Fatalf("a search that matches nothing within its budget: %v", within)
	}

	// Cursors: made up, of the old form (an object id), or of another list.
	_, ownerKey := env.CreateObject(t, nil)
	owner := env.Do(t, "GET", "/api/whoami", ownerKey, nil).Expect(t, 200).JSON(t)["hash"].(string)
	for i := range 3 {
		env.Do(t, "POST", "/api/objects/"+owner+"/keys", ownerKey, map[string]any{"label": fmt.Sprint(i)}).Expect(t, 201)
	}
	keysCursor := env.Do(t, "GET", "/api/objects/"+owner+"/keys?limit=1", ownerKey, nil).Expect(t, 200).JSON(t)["next_cursor"].(string)
	dirCursor := env.Do(t, "GET", "/api/directory?limit=1", "", nil).Expect(t, 200).JSON(t)["next_cursor"].(string)
	for _, c := range []string{base64.RawURLEncoding.EncodeToString([]byte("obj_01jzzzzzzzzzzzzzzzzzzzzzzz")),
		base64.RawURLEncoding.EncodeToString([]byte("3.AAAAAAAAAAA")), keysCursor, "!!!", httpx.SeqCursor("directory", 0)} {
		env.Do(t, "GET", "/api/directory?cursor="+url.QueryEscape(c), "", nil).ExpectError(t, 400, "INVALID_REQUEST")
	}
	env.Do(t, "GET", "/api/objects/"+owner+"/keys?cursor="+url.QueryEscape(dirCursor), ownerKey, nil).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "GET", "/api/objects/"+owner+"/svc-associations?cursor="+url.QueryEscape(keysCursor), ownerKey, nil).ExpectError(t, 400, "INVALID_REQUEST")
}

// TestKeysAndAssociationsListsFollowTheirChanges: an owner's sub-keys and associations are listed
// newest first in pages; a revoked key and a deleted association leave the lists, and the lists
// read the same with the owner key a rotation made.
func TestKeysAndAssociationsListsFollowTheirChanges(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, nil)
	var keyIDs, ascIDs []string // oldest first
	for i := range 4 {
		k := env.Do(t, "POST", "/api/objects/"+hash+"/keys", key, map[string]any{"label": fmt.Sprint("bot ", i)}).Expect(t, 201).JSON(t)
		keyIDs = append(keyIDs, k["id"].(string))
		peer, _ := env.CreateObject(t, nil)
		a := env.Do(t, "POST", "/api/objects/"+hash+"/svc-associations", key, map[string]any{"peer_hash": peer, "role": "peer"}).Expect(t, 201).JSON(t)
		ascIDs = append(ascIDs, a["id"].(string))
	}
	env.Do(t, "DELETE", "/api/objects/"+hash+"/keys/"+keyIDs[1], key, nil).Expect(t, 200)
	env.Do(t, "DELETE", "/api/objects/"+hash+"/svc-associations/"+ascIDs[2], key, nil).Expect(t, 200)
	wantKeys := []string{keyIDs[3], keyIDs[2], keyIDs[0]}
	wantAscs := []string{ascIDs[3], ascIDs[1], ascIDs[0]}
	check := func(key string) {
		t.Helper()
		if got, pages := listPages(t, env, "/api/objects/"+hash+"/keys?limit=1", key, "keys", "id"); !slices.Equal(got, wantKeys) || pages != 3 {
			t.Fatalf("keys %v in %d pages, want %v", got, pages, wantKeys)
		}
		if got, _ := listPages(t, env, "/api/objects/"+hash+"/keys?limit=50", key, "keys", "id"); !slices.Equal(got, wantKeys) {
			t.Fatalf("keys %v, want %v", got, wantKeys)
		}
		if got, pages := listPages(t, env, "/api/objects/"+hash+"/svc-associations?limit=2", key, "associations", "id"); !slices.Equal(got, wantAscs) || pages != 2 {
			t.Fatalf("associations %v in %d pages, want %v", got, pages, wantAscs)
		}
	}
	check(key)
	rotated := env.Do(t, "POST", "/api/objects/"+hash+"/rotate-key", key, nil).Expect(t, 200).JSON(t)["api_key"].(string)
	check(rotated)
	env.Eventually(t, func() bool {
		return env.Do(t, "GET", "/api/objects/"+hash+"/keys", key, nil).Status == 401
	}, "the rotated-away key is refused")
	// Another object's key lists nothing of this object's.
	other, otherKey := env.CreateObject(t, nil)
	if got, _ := listPages(t, env, "/api/objects/"+other+"/keys?limit=50", otherKey, "keys", "id"); len(got) != 0 {
		t.Fatalf("a new object lists keys %v", got)
	}
}

// identityState is the identity phase's owner object and a rare search text.
type identityState struct {
	hash, key string
}

// identityPhase: objects loaded through identity-svc's own bulk preload (a fifth of them private,
// one in forty verified), with an owner holding a page of sub-keys and associations. It measures
// the directory (plain, a search that matches nothing, verified ones), the owner's lists and an
// object read.
var identityPhase = scalePhase{
	name: "identity",
	setup: func(tb testing.TB, env *Env) any {
		hash, key := env.CreateObject(tb, map[string]any{"initial_llm_txt": "# Identity scale owner\n"})
		for i := range 10 {
			env.Do(tb, "POST", "/api/objects/"+hash+"/keys", key, map[string]any{"label": fmt.Sprint("bot ", i)}).Expect(tb, 201)
			env.Do(tb, "POST", "/api/objects/"+hash+"/svc-associations", key, map[string]any{"peer_hash": hash, "role": "self"}).Expect(tb, 201)
		}
		return &identityState{hash: hash, key: key}
	},
	grow: func(tb testing.TB, env *Env, state any, have, size int) {
		const batch = 2000
		uri := testkit.Backends(tb).MongoURI
		for from := have; from < size; from += batch {
			var in []preload.Object
			for i := from; i < min(size, from+batch); i++ {
				in = append(in, preload.Object{InitialLLMTxt: fmt.Sprintf("# Scale object %d\n\nA profile.\n", i),
					Private: i%5 == 4, Verified: i%40 == 3})
			}
			if _, err := preloadObjects(uri, env, in); err != nil {
				tb.Error(err)
				return
			}
		}
	},
	routes: func(state any) []scaleRoute {
		st := state.(*identityState)
		return []scaleRoute{
			{path: "/api/directory"},
			{path: "/api/directory?q=zq-rare-text"},
			{path: "/api/directory?status=verified"},
			{path: "/api/objects/" + st.hash + "/keys", key: st.key},
			{path: "/api/objects/" + st.hash + "/svc-associations", key: st.key},
			{path: "/api/objects/" + st.hash},
		}
	},
}
