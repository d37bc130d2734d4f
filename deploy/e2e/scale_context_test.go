package e2e

import (
	"context"
	"fmt"
	"testing"

	"github.com/svcdev/svc/deploy/internal/preload"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

func init() { scalePhases = append(scalePhases, contextPhase) }

// contextState is the context phase's owner: a real object whose sources are at the limit.
type contextState struct {
	hash, key string
}

// contextUnit is how many sources one preloaded object holds (the per-object limit), with a
// tenth as many links, decisions and versions.
const contextUnit = 100

// contextPhase: tracked sources spread over objects within the per-object limit, with their
// links, decisions and versions, loaded in context-svc's layout (deploy/internal/preload);
// the owner's object holds as many sources as it may, and pages of links, decisions and versions.
var contextPhase = scalePhase{
	name: "context",
	setup: func(tb testing.TB, env *Env) any {
		hash, key := env.CreateObject(tb, map[string]any{"initial_llm_txt": "# Scale context\n"})
		env.Do(tb, "GET", "/api/objects/"+hash+"/llm.txt", "", nil).Expect(tb, 200) // materialised
		id := env.Internal(tb, "identity-svc", "GET", "/internal/v1/resolve/"+hash)["object_id"].(string)
		preloadContext(tb, env, []preload.ContextObject{{ObjectID: id, Sources: contextUnit, Links: 60, Decisions: 60, Versions: 60}})
		return &contextState{hash: hash, key: key}
	},
	grow: func(tb testing.TB, env *Env, _ any, have, size int) {
		var objects []preload.ContextObject
		for i := have; i < size; i += contextUnit {
			n := min(contextUnit, size-i)
			objects = append(objects, preload.ContextObject{ObjectID: fmt.Sprintf("obj_ctxscale_%d", i/contextUnit),
				From: i % contextUnit, Sources: n, Links: n / 10, Decisions: n / 10, Versions: n / 10})
		}
		preloadContext(tb, env, objects)
	},
	routes: func(state any) []scaleRoute {
		st := state.(*contextState)
		var out []scaleRoute
		for _, p := range []string{"/sources", "/versions", "/context-links", "/decision-memory", "/decision-memory?format=json"} {
			out = append(out, scaleRoute{path: "/api/objects/" + st.hash + p, key: st.key})
		}
		return out
	},
}

func preloadContext(tb testing.TB, env *Env, objects []preload.ContextObject) {
	client, db, err := mongox.Connect(context.Background(), testkit.Backends(tb).MongoURI, env.Name+"_context_svc")
	if err != nil {
		tb.Error(err)
		return
	}
	defer client.Disconnect(context.Background())
	if err := preload.Contexts(context.Background(), db, objects); err != nil {
		tb.Error(err)
	}
}

// TestPreloadedContextReadsLikeWritten preloads an object's sources in two parts, with links,
// decisions and versions (deploy/internal/preload), and reads them through the gateway as its
// owner: the sources page in order and count against the limit (a create past it is refused),
// the versions follow the current one, and the links and decisions are listed.
func TestPreloadedContextReadsLikeWritten(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Preloaded context\n"})
	env.Do(t, "GET", "/api/objects/"+hash+"/llm.txt", "", nil).Expect(t, 200) // materialised
	id := env.Internal(t, "identity-svc", "GET", "/internal/v1/resolve/"+hash)["object_id"].(string)
	preloadContext(t, env, []preload.ContextObject{{ObjectID: id, Sources: 60, Links: 3, Decisions: 2, Versions: 4}})
	preloadContext(t, env, []preload.ContextObject{{ObjectID: id, From: 60, Sources: 40}})
	sources, _ := listPages(t, env, "/api/objects/"+hash+"/sources?limit=50", key, "sources", "id")
	if len(sources) != 100 || sources[0] != "src_"+id+"_0" || sources[99] != "src_"+id+"_99" {
		t.Fatalf("preloaded sources listed %d (%v … %v), want 100 in order", len(sources), sources[:1], sources[len(sources)-1:])
	}
	env.Do(t, "POST", "/api/objects/"+hash+"/sources", key, map[string]any{"kind": "text", "title": "One more", "text": "past the limit"}).
		Expect(t, 409)
	versions := env.Do(t, "GET", "/api/objects/"+hash+"/versions", key, nil).Expect(t, 200).JSON(t)["versions"].([]any)
	if len(versions) != 5 || versions[0].(map[string]any)["version"] != float64(5) {
		t.Errorf("versions %v, want 5, the newest first", versions)
	}
	if links := env.Do(t, "GET", "/api/objects/"+hash+"/context-links", key, nil).Expect(t, 200).JSON(t)["links"].([]any); len(links) != 3 {
		t.Errorf("context links %v, want 3", links)
	}
	if ds := env.Do(t, "GET", "/api/objects/"+hash+"/decision-memory?format=json", key, nil).Expect(t, 200).JSON(t)["decisions"].([]any); len(ds) != 2 {
		t.Errorf("decisions %v, want 2", ds)
	}
}
