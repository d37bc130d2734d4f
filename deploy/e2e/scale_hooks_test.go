package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/deploy/internal/preload"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// TestOwnerHookListsArePages follows the owner lists of webhook-svc and claims-svc through the
// gateway: webhooks and claims come oldest first in pages whose cursors verify (a forged or
// foreign one is 400), a deleted webhook is gone from the list, 32 claims created at once never
// pass the claims quota, and an event still reaches every webhook and context subscription of
// its object, found through its list.
func TestOwnerHookListsArePages(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	env := webhookEnv(t, rcv, WithEnv("WEBHOOK_MAX_PER_OBJECT", "6"), WithEnv("CLAIMS_MAX_PER_OBJECT", "5"))
	box, key := env.CreateObject(t, nil)
	_, strangerKey := env.CreateObject(t, nil)
	hooksPath := "/api/objects/" + box + "/webhooks"

	var made []string
	for i := range 5 {
		id, _ := createWebhook(t, env, box, key, map[string]any{"callback_url": rcv.URL(fmt.Sprintf("/hook%d", i))})
		made = append(made, id)
	}
	env.Do(t, "DELETE", hooksPath+"/"+made[1], key, nil).Expect(t, 200)
	kept := append([]string{made[0]}, made[2:]...)
	if got := pageThrough(t, env, hooksPath, key, "webhooks", 2); fmt.Sprint(got) != fmt.Sprint(kept) {
		t.Fatalf("webhooks listed %v, want %v (oldest first, the deleted one gone)", got, kept)
	}
	forged := base64.RawURLEncoding.EncodeToString([]byte("AAAAAAAAAAA." + made[0]))
	env.Do(t, "GET", hooksPath+"?cursor="+forged, key, nil).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "GET", hooksPath+"?cursor="+base64.RawURLEncoding.EncodeToString([]byte(made[0])), key, nil).
		ExpectError(t, 400, "INVALID_REQUEST")

	// Every subscription of the box hears its context update: four webhooks, three strangers'.
	for i := range 3 {
		env.Do(t, "POST", "/api/objects/"+box+"/context-subscriptions", strangerKey,
			map[string]any{"callback_url": rcv.URL(fmt.Sprintf("/watch%d", i))}).Expect(t, 201)
	}
	env.Do(t, "PUT", "/api/objects/"+box+"/llm.txt", key, map[string]any{"body": "# Box\n\nnews"}).Expect(t, 200)
	rcv.waitFor(t, env, 7)
	time.Sleep(300 * time.Millisecond) // let a wrong extra delivery show up
	paths := map[string]int{}
	for _, r := range rcv.Got() {
		if r.Payload.Type == "context_updated" {
			paths[r.Path]++
		}
	}
	for _, p := range []string{"/hook0", "/hook2", "/hook3", "/hook4", "/watch0", "/watch1", "/watch2"} {
		if paths[p] != 1 {
			t.Errorf("%s got %d context updates, want 1 (all: %v)", p, paths[p], paths)
		}
	}
	if paths["/hook1"] != 0 {
		t.Errorf("the deleted webhook got %d deliveries", paths["/hook1"])
	}

	// Claims: 32 at once on a quota of 5; the list pages through the 5, oldest first.
	var mu sync.Mutex
	var claimIDs []string
	refused := 0
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			r := env.Do(t, "POST", "/api/claims", key, map[string]any{"object_hash": box, "proof_type": "domain",
				"claimed_target": fmt.Sprintf("d%d.example.com", i)})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case r.Status == http.StatusCreated:
				claimIDs = append(claimIDs, Str(t, r.JSON(t), "id"))
			case r.Status == http.StatusConflict && r.ErrorCode(t) == "QUOTA_EXCEEDED":
				refused++
			default:
				t.Errorf("create claim: %d %s", r.Status, r.Body)
			}
		})
	}
	wg.Wait()
	if len(claimIDs) != 5 || refused != 27 {
		t.Fatalf("32 claims at once with a quota of 5: %d created, %d refused", len(claimIDs), refused)
	}
	claimsPath := "/api/objects/" + box + "/claims"
	listed := pageThrough(t, env, claimsPath, key, "claims", 2)
	if len(listed) != 5 || strings.Join(sortedCopy(listed), ",") != strings.Join(sortedCopy(claimIDs), ",") {
		t.Fatalf("claims listed %v, want each of %v once", listed, claimIDs)
	}
	env.Do(t, "GET", claimsPath+"?cursor="+forged, key, nil).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "GET", "/api/claims/"+listed[0], key, nil).Expect(t, 200)
}

// pageThrough reads every page of an owner list of limit entries and returns the ids in order.
func pageThrough(t *testing.T, env *Env, path, key, field string, limit int) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for range 100 {
		q := fmt.Sprintf("%s?limit=%d", path, limit)
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		page := env.Do(t, "GET", q, key, nil).Expect(t, 200).JSON(t)
		items := page[field].([]any)
		if len(items) > limit {
			t.Fatalf("%s: a page of limit %d held %d", path, limit, len(items))
		}
		for _, it := range items {
			ids = append(ids, it.(map[string]any)["id"].(string))
		}
		next, _ := page["next_cursor"].(string)
		if next == "" {
			return ids
		}
		cursor = next
	}
	t.Fatalf("%s: no last page after 100", path)
	return nil
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func init() { scalePhases = append(scalePhases, hooksPhase) }

// hooksState is the hooks phase's owner: a real object at its quotas of webhooks, context
// subscriptions to its box and claims.
type hooksState struct {
	hash, key, objectID, claimID, webhookID string
}

// hooksUnit is how many documents one unit of the hooks phase holds: five webhooks of one
// object, four context subscriptions of one watcher to one box, and one claim of one object.
// Sizes are multiples of it, so that a unit's quota scopes are filled by one preload.
const hooksUnit = 10

// hooksPhase: owner webhooks, context subscriptions and claims spread over objects within their
// quotas, loaded through webhook-svc's and claims-svc's own store code (their Preload), and the
// owner lists of one object at its quotas.
var hooksPhase = scalePhase{
	name: "hooks",
	setup: func(tb testing.TB, env *Env) any {
		hash, key := env.CreateObject(tb, nil)
		id := env.Internal(tb, "identity-svc", "GET", "/internal/v1/resolve/"+hash)["object_id"].(string)
		st := &hooksState{hash: hash, key: key, objectID: id}
		var seeds []preload.Subscription
		for i := range 25 {
			seeds = append(seeds, preload.Subscription{Kind: preload.SubscriptionWebhook, ObjectID: id, CreatorID: id, CreatorHash: hash,
				CallbackURL: fmt.Sprintf("https://hooks.example.com/owner/%d", i)})
		}
		for i := range 100 {
			// Ten strangers, each at its quota of ten subscriptions to one box.
			stranger := fmt.Sprintf("hooks_stranger%d", i/10)
			seeds = append(seeds, preload.Subscription{Kind: preload.SubscriptionContext, ObjectID: id, CreatorID: "obj_" + stranger,
				CreatorHash: "svc_" + stranger, CallbackURL: fmt.Sprintf("https://stranger.example.com/%d", i)})
		}
		var claims []preload.Claim
		for i := range 100 {
			claims = append(claims, preload.Claim{ObjectID: id, ObjectHash: hash, Domain: fmt.Sprintf("owner%d.example.com", i), Verified: i%2 == 0})
		}
		withDB(tb, env, "_webhook_svc", func(ctx context.Context, db *mongo.Database) error { return preload.Subscriptions(ctx, db, seeds) })
		withDB(tb, env, "_claims_svc", func(ctx context.Context, db *mongo.Database) error { return preload.Claims(ctx, db, claims) })
		hooks := env.Do(tb, "GET", "/api/objects/"+hash+"/webhooks?limit=1", key, nil).Expect(tb, 200).JSON(tb)["webhooks"].([]any)
		st.webhookID = hooks[0].(map[string]any)["id"].(string)
		list := env.Do(tb, "GET", "/api/objects/"+hash+"/claims?limit=1", key, nil).Expect(tb, 200).JSON(tb)["claims"].([]any)
		st.claimID = list[0].(map[string]any)["id"].(string)
		return st
	},
	grow: func(tb testing.TB, env *Env, _ any, have, size int) {
		var seeds []preload.Subscription
		var claims []preload.Claim
		flush := func() {
			withDB(tb, env, "_webhook_svc", func(ctx context.Context, db *mongo.Database) error { return preload.Subscriptions(ctx, db, seeds) })
			withDB(tb, env, "_claims_svc", func(ctx context.Context, db *mongo.Database) error { return preload.Claims(ctx, db, claims) })
			seeds, claims = seeds[:0], claims[:0]
		}
		for u := have / hooksUnit; u < size/hooksUnit; u++ {
			s, c := hooksUnitSeeds(u)
			seeds, claims = append(seeds, s...), append(claims, c...)
			if len(seeds) >= 900 {
				flush()
			}
		}
		flush()
	},
	routes: func(state any) []scaleRoute {
		st := state.(*hooksState)
		base := "/api/objects/" + st.hash
		return []scaleRoute{
			{path: base + "/webhooks", key: st.key},
			{path: base + "/context-subscriptions", key: st.key},
			{path: base + "/claims", key: st.key},
			{path: "/api/claims/" + st.claimID, key: st.key},
			{path: base + "/webhooks/" + st.webhookID + "/attempt-counts", key: st.key},
		}
	},
}

// hooksUnitSeeds are the documents of unit u of the hooks phase.
func hooksUnitSeeds(u int) ([]preload.Subscription, []preload.Claim) {
	var seeds []preload.Subscription
	owner, box, watcher := fmt.Sprintf("obj_hooks_o%d", u), fmt.Sprintf("obj_hooks_b%d", u), fmt.Sprintf("obj_hooks_w%d", u)
	for i := range 5 {
		seeds = append(seeds, preload.Subscription{Kind: preload.SubscriptionWebhook, ObjectID: owner, CreatorID: owner, CreatorHash: "svc_" + owner[4:],
			CallbackURL: fmt.Sprintf("https://hooks.example.com/%d/%d", u, i)})
	}
	for i := range 4 {
		seeds = append(seeds, preload.Subscription{Kind: preload.SubscriptionContext, ObjectID: box, CreatorID: watcher, CreatorHash: "svc_" + watcher[4:],
			CallbackURL: fmt.Sprintf("https://watch.example.com/%d/%d", u, i)})
	}
	claim := preload.Claim{ObjectID: fmt.Sprintf("obj_hooks_c%d", u), ObjectHash: fmt.Sprintf("svc_hooks_c%d", u),
		Domain: fmt.Sprintf("c%d.example.com", u)}
	return seeds, []preload.Claim{claim}
}

// withDB runs fn on the database of one service of env (suffix: "_<service>_svc"), from any
// goroutine: a failure is reported with tb.Error.
func withDB(tb testing.TB, env *Env, suffix string, fn func(context.Context, *mongo.Database) error) {
	ctx := context.Background()
	client, db, err := mongox.Connect(ctx, testkit.Backends(tb).MongoURI, env.Name+suffix)
	if err != nil {
		tb.Error(err)
		return
	}
	defer client.Disconnect(ctx)
	if err := fn(ctx, db); err != nil {
		tb.Error(err)
	}
}
