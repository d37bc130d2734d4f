package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	mailbox "github.com/svcdev/svc/mailbox-svc/app"
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

// mailboxPhase: messages spread over threads, loaded through mailbox-svc's store API
// (mailbox.Preloader over store.ImportThread: the messages, the threads and both mailboxes as
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
			tb.Fatal(err)
		}
		defer client.Disconnect(context.Background())
		loader := mailbox.NewPreloader(db)
		var threads []mailbox.PreloadThread
		flush := func() {
			if err := loader.Load(context.Background(), threads); err != nil {
				tb.Fatal(err)
			}
			threads = threads[:0]
		}
		body := strings.Repeat("scale message ", 20)
		start := time.Now().Add(-time.Duration(size) * time.Second)
		for k := have / scaleThreadSize; k < size/scaleThreadSize; k++ {
			// Senders and the other mailboxes are shared by many threads, as a busy network's are.
			other := mailbox.PreloadObject{ObjectID: fmt.Sprint("obj_scalemb_", k%200), Hash: fmt.Sprint("svc_scalemb_", k%200)}
			owner := mailbox.PreloadObject{ObjectID: st.objectID, Hash: st.hash}
			if k%scaleOwnerEvery != 0 {
				owner = mailbox.PreloadObject{ObjectID: fmt.Sprint("obj_scalemb_b", k%50), Hash: fmt.Sprint("svc_scalemb_b", k%50)}
			}
			t := mailbox.PreloadThread{ID: scaleThreadID(k), Participants: [2]mailbox.PreloadObject{other, owner}}
			for i := range scaleThreadSize {
				from, to := other.ObjectID, owner.ObjectID
				if i == scaleThreadSize-1 {
					from, to = to, from // the owner replies
				}
				t.Messages = append(t.Messages, mailbox.PreloadMessage{ID: fmt.Sprint("msg_scalemb_", k*scaleThreadSize+i),
					FromID: from, ToID: to, Body: body, At: start.Add(time.Duration(k*scaleThreadSize+i) * time.Second)})
			}
			threads = append(threads, t)
			if len(threads) == 1000 {
				flush()
			}
		}
		flush()
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

func scaleThreadID(k int) string { return fmt.Sprint("thr_scalemb_", k) }
