package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/svcdev/svc/deploy/internal/preload"
	graphsvc "github.com/svcdev/svc/graph-svc/app"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

func init() { scalePhases = append(scalePhases, graphPhase) }

// graphState is the graph phase's two objects and their thread, a real mailbox thread.
type graphState struct {
	hashA, keyA, idA, hashB, idB, thread string
}

// graphPhase: message nodes in one thread (the phase's size of them), loaded through graph-svc's
// own projection over its ordinary store (graph-svc's app.Preloader: every write a blind insert
// keyed by its data, messages in batches of graphMessageBatch), and tracked sources of the owner's
// self-ingest thread (a tenth of the size), stored as a failed ingest leaves them
// (preload.GraphSources). A tenth of the messages say "kestrel", the
// word the memory search looks for. Its routes are owner reads, with the key of the thread's
// first participant.
var graphPhase = scalePhase{
	name: "graph",
	setup: func(tb testing.TB, env *Env) any {
		st := &graphState{}
		st.hashA, st.keyA = env.CreateObject(tb, nil)
		st.hashB, _ = env.CreateObject(tb, nil)
		st.idA = env.Internal(tb, "identity-svc", "GET", "/internal/v1/resolve/"+st.hashA)["object_id"].(string)
		st.idB = env.Internal(tb, "identity-svc", "GET", "/internal/v1/resolve/"+st.hashB)["object_id"].(string)
		st.thread = Str(tb, sendMessage(tb, env, st.hashA, st.hashB, "", "The scale thread starts."), "thread_id")
		env.Eventually(tb, func() bool {
			g := env.Do(tb, "GET", "/api/threads/"+st.thread+"/graph", st.keyA, nil)
			return g.Status == 200 && len(g.JSON(tb)["nodes"].([]any)) == 1
		}, "the thread's first message is projected")
		// The feed phase preloads the network's lists while nothing else appends to them: let
		// feed-svc's consumer project this phase's creations and message first.
		env.Eventually(tb, func() bool {
			a := env.Do(tb, "GET", "/api/activity?limit=50", "", nil)
			return a.Status == 200 && activityHas(a.JSON(tb), "message.created", st.hashB)
		}, "feed-svc projects the phase's message")
		return st
	},
	grow: func(tb testing.TB, env *Env, state any, have, size int) {
		st := state.(*graphState)
		ctx := context.Background()
		client, db, err := mongox.Connect(ctx, testkit.Backends(tb).MongoURI, env.Name+"_graph_svc")
		if err != nil {
			tb.Error(err)
			return
		}
		defer client.Disconnect(context.Background())
		if err := growGraphMessages(ctx, graphsvc.NewPreloader(db), st, have, size); err != nil {
			tb.Error(err)
			return
		}
		var urls []string
		for i := have / 10; i < size/10; i++ {
			if urls = append(urls, fmt.Sprintf("https://example.com/scale/%d", i)); len(urls) == 1000 || i == size/10-1 {
				if err := preload.GraphSources(ctx, db, st.idA, st.hashA, urls, preloadedPullError, graphSchedule); err != nil {
					tb.Error(err)
					return
				}
				urls = urls[:0]
			}
		}
	},
	routes: func(state any) []scaleRoute {
		st := state.(*graphState)
		return []scaleRoute{
			{path: "/api/threads/" + st.thread + "/graph", key: st.keyA},
			{path: "/api/threads/ths_" + st.idA + "/sources", key: st.keyA},
			{path: "/api/ingest", key: st.keyA},
			{path: "/api/objects/" + st.hashA + "/memory/search?q=kestrel", key: st.keyA},
		}
	},
}

// graphMessageBatch is how many messages the graph phase projects at once: enough that the
// batch's few reads and counter moves cost little beside its inserts, and few enough that the
// read of its stored nodes (two ids a message) stays one $in the embedded store's _id index
// serves (at most 1,000 values).
const graphMessageBatch = 450

// growGraphMessages projects the graph phase's messages have to size into its thread, in order,
// graphMessageBatch at a time.
func growGraphMessages(ctx context.Context, p *graphsvc.Preloader, st *graphState, have, size int) error {
	base := time.Now().UTC().Add(-time.Duration(size) * time.Millisecond)
	var msgs []contract.MessageCreatedData
	for i := have; i < size; i++ {
		m := contract.MessageCreatedData{MessageID: fmt.Sprint("msg_scale_", i), ThreadID: st.thread, Kind: "note",
			FromObjectID: st.idA, FromHash: st.hashA, ToObjectID: st.idB, ToHash: st.hashB,
			Body:      fmt.Sprintf("Scale note on the w%d plan and the v%d review.", i%7, i%5),
			CreatedAt: base.Add(time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano)}
		if i%2 == 1 {
			m.FromObjectID, m.FromHash, m.ToObjectID, m.ToHash = st.idB, st.hashB, st.idA, st.hashA
		}
		if i > 0 { // as mailbox-svc names it: the thread's message before
			m.PrevMessageID = fmt.Sprint("msg_scale_", i-1)
		}
		if i%10 == 0 {
			m.Body += " The kestrel flies."
		}
		if msgs = append(msgs, m); len(msgs) == graphMessageBatch || i == size-1 {
			if err := p.Messages(ctx, msgs); err != nil {
				return err
			}
			msgs = msgs[:0]
		}
	}
	return nil
}

// preloadedPullError is the error of a preloaded source's first pull.
const preloadedPullError = "preloaded: not fetched"

// graphSchedule is graph-svc's default re-pull schedule (GRAPH_PULL_INTERVAL, GRAPH_PULL_SCAN).
var graphSchedule = preload.GraphSchedule{Interval: 6 * time.Hour, Scan: 5 * time.Minute}

// TestPreloadedSourcesReadLikeIngested: sources preloaded into an owner's self-ingest thread are
// listed newest first with their failed pull, in the ingest overview and its self thread, and a
// second preload adds to them.
func TestPreloadedSourcesReadLikeIngested(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, nil)
	id := env.Internal(t, "identity-svc", "GET", "/internal/v1/resolve/"+hash)["object_id"].(string)
	client, db, err := mongox.Connect(context.Background(), testkit.Backends(t).MongoURI, env.Name+"_graph_svc")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(context.Background())
	for _, urls := range [][]string{{"https://example.com/1", "https://example.com/2"}, {"https://example.com/3"}} {
		if err := preload.GraphSources(context.Background(), db, id, hash, urls, preloadedPullError, graphSchedule); err != nil {
			t.Fatal(err)
		}
	}
	thread := "ths_" + id
	listed := env.Do(t, "GET", "/api/threads/"+thread+"/sources", key, nil).Expect(t, 200).JSON(t)["sources"].([]any)
	if len(listed) != 3 {
		t.Fatalf("%d preloaded sources listed, want 3: %v", len(listed), listed)
	}
	for _, raw := range listed {
		src := raw.(map[string]any)
		if src["status"] != "error" || src["last_error"] != preloadedPullError || src["kind"] != "url" || src["visibility"] != "participants" ||
			src["node_id"] != nil || src["last_pulled_at"] == nil {
			t.Errorf("a preloaded source reads %v, want a failed first pull", src)
		}
	}
	overview := env.Do(t, "GET", "/api/ingest", key, nil).Expect(t, 200).JSON(t)
	self, _ := overview["self_thread"].(map[string]any)
	if self == nil || self["thread_id"] != thread || len(overview["sources"].([]any)) != 3 {
		t.Fatalf("the ingest overview after the preload: %v", overview)
	}
}

// activityHas reports whether a page of public activity holds an event of type typ about the
// object of hash.
func activityHas(page map[string]any, typ, hash string) bool {
	items, _ := page["items"].([]any)
	for _, raw := range items {
		if e, _ := raw.(map[string]any); e["type"] == typ && e["hash"] == hash {
			return true
		}
	}
	return false
}
