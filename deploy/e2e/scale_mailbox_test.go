package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/deploy/internal/preload"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

func init() { scalePhases = append(scalePhases, mailboxPhase) }

// mailboxState is the mailbox phase's owner box (a real object, so that the gateway resolves it
// and its key opens its mailbox) and the thread whose page is measured.
type mailboxState struct {
	hash, key, objectID string
	thread              string
}

// Units of the mailbox phase: messages come in threads of scaleThreadSize, and one thread in
// scaleOwnerEvery is the owner's, so at 100,000 messages the store holds 10,000 threads and the
// owner's mailbox 2,000 of them.
const (
	scaleThreadSize = 10
	scaleOwnerEvery = 5
)

// mailboxPhase: messages spread over threads, loaded in mailbox-svc's layout
// (deploy/internal/preload: the messages, the threads and both mailboxes as
// sends leave them). Routes: the owner's mailbox page, a page of one of its threads, and its
// blocked list (beside its rules).
var mailboxPhase = scalePhase{
	name: "mailbox",
	setup: func(tb testing.TB, env *Env) any {
		hash, key := env.CreateObject(tb, nil)
		id := env.Internal(tb, "identity-svc", "GET", "/internal/v1/resolve/"+hash)["object_id"].(string)
		for range 3 {
			other, _ := env.CreateObject(tb, nil)
			env.Do(tb, "POST", "/api/objects/"+hash+"/sender-blocks", key, map[string]any{"blocked_hash": other}).Expect(tb, 201)
		}
		return &mailboxState{hash: hash, key: key, objectID: id, thread: scaleThreadID(0)}
	},
	grow: func(tb testing.TB, env *Env, state any, have, size int) {
		st := state.(*mailboxState)
		client, db, err := mongox.Connect(context.Background(), testkit.Backends(tb).MongoURI, env.Name+"_mailbox_svc")
		if err != nil {
			tb.Error(err)
			return
		}
		defer client.Disconnect(context.Background())
		var threads []preload.Thread
		start := time.Now().Add(-time.Duration(size) * time.Second)
		for k := have / scaleThreadSize; k < size/scaleThreadSize; k++ {
			if threads = append(threads, scaleThread(st, k, start)); len(threads) == 1000 || k == size/scaleThreadSize-1 {
				if err := preload.Threads(context.Background(), db, threads); err != nil {
					tb.Error(err)
					return
				}
				threads = threads[:0]
			}
		}
	},
	routes: func(state any) []scaleRoute {
		st := state.(*mailboxState)
		return []scaleRoute{
			{path: "/api/objects/" + st.hash + "/mailbox?limit=20", key: st.key},
			{path: "/api/threads/" + st.thread, key: st.key},
			{path: "/api/objects/" + st.hash + "/rules?show_blocked_list=1", key: st.key},
		}
	},
}

// scaleThread is the k-th thread of the mailbox phase, its messages a second apart from start
// on: a sender's, the last the receiver's reply.
func scaleThread(st *mailboxState, k int, start time.Time) preload.Thread {
	body := strings.Repeat("scale message ", 20)
	// Senders and the other mailboxes are shared by many threads, as a busy network's are.
	other := preload.Participant{ObjectID: fmt.Sprint("obj_scalemb_", k%200), Hash: fmt.Sprint("svc_scalemb_", k%200)}
	owner := preload.Participant{ObjectID: st.objectID, Hash: st.hash}
	if k%scaleOwnerEvery != 0 {
		owner = preload.Participant{ObjectID: fmt.Sprint("obj_scalemb_b", k%50), Hash: fmt.Sprint("svc_scalemb_b", k%50)}
	}
	t := preload.Thread{ID: scaleThreadID(k), Participants: [2]preload.Participant{other, owner}}
	for i := range scaleThreadSize {
		from, to := other.ObjectID, owner.ObjectID
		if i == scaleThreadSize-1 {
			from, to = to, from // the owner replies
		}
		t.Messages = append(t.Messages, preload.Message{ID: fmt.Sprint("msg_scalemb_", k*scaleThreadSize+i),
			FromID: from, ToID: to, Body: body, At: start.Add(time.Duration(k*scaleThreadSize+i) * time.Second)})
	}
	return t
}

func scaleThreadID(k int) string { return fmt.Sprint("thr_scalemb_", k) }

// TestPreloadedThreadsReadLikeSentOnes preloads a thread of three messages between two objects
// (deploy/internal/preload) and reads it through the gateway as its participants do: each
// mailbox lists it with three messages and that participant's inbound ones unread, and the
// thread pages its messages in order.
func TestPreloadedThreadsReadLikeSentOnes(t *testing.T) {
	t.Parallel()
	env := Start(t)
	aHash, aKey := env.CreateObject(t, nil)
	bHash, bKey := env.CreateObject(t, nil)
	aID := env.Internal(t, "identity-svc", "GET", "/internal/v1/resolve/"+aHash)["object_id"].(string)
	bID := env.Internal(t, "identity-svc", "GET", "/internal/v1/resolve/"+bHash)["object_id"].(string)
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	th := preload.Thread{ID: "thr_preloaded", Participants: [2]preload.Participant{{ObjectID: aID, Hash: aHash}, {ObjectID: bID, Hash: bHash}}}
	for i, from := range []string{aID, bID, aID} {
		to := bID
		if from == bID {
			to = aID
		}
		th.Messages = append(th.Messages, preload.Message{ID: fmt.Sprint("msg_preloaded", i), FromID: from, ToID: to, Body: "hello", At: at.Add(time.Duration(i) * time.Second)})
	}
	withDB(t, env, "_mailbox_svc", func(ctx context.Context, db *mongo.Database) error {
		return preload.Threads(ctx, db, []preload.Thread{th})
	})
	for _, c := range []struct {
		hash, key string
		unread    float64
	}{{aHash, aKey, 1}, {bHash, bKey, 2}} {
		threads := env.Do(t, "GET", "/api/objects/"+c.hash+"/mailbox", c.key, nil).Expect(t, 200).JSON(t)["threads"].([]any)
		if len(threads) != 1 {
			t.Fatalf("%s's mailbox lists %v, want the preloaded thread", c.hash, threads)
		}
		s := threads[0].(map[string]any)
		if s["id"] != th.ID || s["message_count"] != float64(3) || s["unread_count"] != c.unread {
			t.Errorf("%s's mailbox shows %v, want %s with 3 messages, %v unread", c.hash, s, th.ID, c.unread)
		}
	}
	msgs := env.Do(t, "GET", "/api/threads/"+th.ID, aKey, nil).Expect(t, 200).JSON(t)["messages"].([]any)
	var ids []string
	for _, m := range msgs {
		ids = append(ids, m.(map[string]any)["id"].(string))
	}
	if fmt.Sprint(ids) != "[msg_preloaded0 msg_preloaded1 msg_preloaded2]" {
		t.Errorf("the thread pages %v, want its three messages in order", ids)
	}
}
