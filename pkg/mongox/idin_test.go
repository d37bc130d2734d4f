package mongox_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// TestIDInParts: FindIn, UpdateIn and DeleteIn reach every document of a list longer than
// MaxIDIn, sending no _id $in of more than MaxIDIn ids (the most the embedded store serves from
// its _id index), and send nothing for no ids.
func TestIDInParts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testkit.Backends(t)
	var mu sync.Mutex
	sent := map[string][]int{} // the lengths of the _id $in lists each command sent
	monitor := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		var q bson.Raw
		switch e.CommandName {
		case "find":
			q, _ = e.Command.Lookup("filter").DocumentOK()
		case "update", "delete":
			list := map[string]string{"update": "updates", "delete": "deletes"}[e.CommandName]
			arr, _ := e.Command.Lookup(list).ArrayOK()
			vals, _ := arr.Values()
			for _, v := range vals {
				q, _ = v.Document().Lookup("q").DocumentOK()
			}
		default:
			return
		}
		in, err := q.LookupErr("_id", "$in")
		if err != nil {
			return
		}
		vals, _ := in.Array().Values()
		mu.Lock()
		sent[e.CommandName] = append(sent[e.CommandName], len(vals))
		mu.Unlock()
	}}
	client, db, err := mongox.Connect(ctx, env.MongoURI, env.Name+"_mongox", monitor)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = db.Drop(context.Background())
		_ = client.Disconnect(context.Background())
	})
	coll := db.Collection("idin")
	const n = 2*mongox.MaxIDIn + 345
	docs := make([]bson.D, n)
	ids := make([]string, 0, n+5)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: fmt.Sprintf("d%05d", i)}}
		ids = append(ids, fmt.Sprintf("d%05d", i))
	}
	if _, err := mongox.InsertNewInBatches(ctx, coll, docs, 500); err != nil {
		t.Fatal(err)
	}
	ids = append(ids, "absent1", "absent2", "absent3", "absent4", "absent5")
	want := []int{mongox.MaxIDIn, mongox.MaxIDIn, n + 5 - 2*mongox.MaxIDIn}

	type doc struct {
		ID   string `bson:"_id"`
		Seen bool   `bson:"seen"`
	}
	found, err := mongox.FindIn[doc](ctx, coll, ids)
	if err != nil || len(found) != n {
		t.Fatalf("FindIn found %d (%v), want %d", len(found), err, n)
	}
	if err := mongox.UpdateIn(ctx, coll, ids, bson.D{{Key: "$set", Value: bson.D{{Key: "seen", Value: true}}}}); err != nil {
		t.Fatal(err)
	}
	if c, err := coll.CountDocuments(ctx, bson.D{{Key: "seen", Value: true}}); err != nil || c != n {
		t.Errorf("UpdateIn set %d (%v), want %d", c, err, n)
	}
	if err := mongox.DeleteIn(ctx, coll, ids); err != nil {
		t.Fatal(err)
	}
	if c, err := coll.CountDocuments(ctx, bson.D{}); err != nil || c != 0 {
		t.Errorf("DeleteIn left %d (%v), want 0", c, err)
	}
	if got, err := mongox.FindIn[doc](ctx, coll, nil); err != nil || got == nil || len(got) != 0 {
		t.Errorf("FindIn of no ids: %v, %v; want an empty list", got, err)
	}
	if err := mongox.UpdateIn(ctx, coll, nil, bson.D{{Key: "$set", Value: bson.D{{Key: "seen", Value: false}}}}); err != nil {
		t.Error(err)
	}
	if err := mongox.DeleteIn(ctx, coll, nil); err != nil {
		t.Error(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, name := range []string{"find", "update", "delete"} {
		if fmt.Sprint(sent[name]) != fmt.Sprint(want) {
			t.Errorf("%s sent $in lists of %v ids, want %v", name, sent[name], want)
		}
	}
}
