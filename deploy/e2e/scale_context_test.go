package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"

	contextsvc "github.com/svcdev/svc/context-svc/app"
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
// links, decisions and versions, loaded through context-svc's own store code (contextsvc.Preload);
// the owner's object holds as many sources as it may, and pages of links, decisions and versions.
var contextPhase = scalePhase{
	name: "context",
	setup: func(tb testing.TB, env *Env) any {
		hash, key := env.CreateObject(tb, map[string]any{"initial_llm_txt": "# Scale context\n"})
		env.Do(tb, "GET", "/api/objects/"+hash+"/llm.txt", "", nil).Expect(tb, 200) // materialised
		id := env.Internal(tb, "identity-svc", "GET", "/internal/v1/resolve/"+hash)["object_id"].(string)
		preloadContext(tb, env, []contextsvc.PreloadObject{{ObjectID: id, Sources: contextUnit, Links: 60, Decisions: 60, Versions: 60}})
		return &contextState{hash: hash, key: key}
	},
	grow: func(tb testing.TB, env *Env, _ any, have, size int) {
		const workers = 4
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				var objects []contextsvc.PreloadObject
				for i := have; i < size; i += contextUnit {
					if (i/contextUnit)%workers == w {
						n := min(contextUnit, size-i)
						objects = append(objects, contextsvc.PreloadObject{ObjectID: fmt.Sprintf("obj_ctxscale_%d", i/contextUnit),
							From: i % contextUnit, Sources: n, Links: n / 10, Decisions: n / 10, Versions: n / 10})
					}
				}
				preloadContext(tb, env, objects)
			})
		}
		wg.Wait()
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

func preloadContext(tb testing.TB, env *Env, objects []contextsvc.PreloadObject) {
	client, db, err := mongox.Connect(context.Background(), testkit.Backends(tb).MongoURI, env.Name+"_context_svc")
	if err != nil {
		tb.Error(err)
		return
	}
	defer client.Disconnect(context.Background())
	if err := contextsvc.Preload(context.Background(), db, objects); err != nil {
		tb.Error(err)
	}
}
