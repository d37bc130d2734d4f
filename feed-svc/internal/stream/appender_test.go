package stream

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/svcdev/svc/feed-svc/internal/consumers"
	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// published builds the event a service would publish, as the consumer receives it.
func published(t *testing.T, topic, typ, objectID, hash string, data any) events.Event {
	t.Helper()
	return testkit.Consumed(t, events.MustNew(topic, typ, objectID, hash, "", data))
}

// TestAppenderFollowsTheProjection feeds identity-svc's and feed-svc's events to the network
// projection and to the streams' appender, on the embedded store, with no other service: public
// creations and a public author's item become rows of the feed's log, a private object's creation
// and a private author's item do not (and do not stop the batch), every public event lands in its
// object's log as its public payload, and a redelivered batch appends nothing new.
func TestAppenderFollowsTheProjection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testkit.Backends(t)
	db := testkit.Database(t, env, "feed")
	if err := mongox.EnsureIndexes(ctx, db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	st := store.New(db)
	projection := &consumers.Network{Store: st}
	log, _ := newLog(t, 100)
	appender := &Appender{Log: log, Objects: st}

	created := func(id, vis string) events.Event {
		return published(t, events.TopicIdentity, events.ObjectCreated, id, "svc_"+id,
			contract.ObjectCreatedData{Object: contract.Object{ObjectID: id, Hash: "svc_" + id, Visibility: contract.Visibility(vis), Title: "Title " + id}})
	}
	adaHash := "svc_ada"
	item := func(id string, d contract.FeedItemPublishedData) events.Event {
		d.ItemID, d.Title, d.Tags, d.PostedAt = id, "item "+id, []string{}, "2026-01-02T03:04:05Z"
		return published(t, events.TopicFeed, events.FeedItemPublished, "box", "svc_box", d)
	}
	batch := []events.Event{
		created("box", "public"), created("ada", "public"), created("hidden", "private"),
		item("itm_1", contract.FeedItemPublishedData{AuthorObjectID: "ada", AuthorHash: &adaHash, AuthorName: "Ada"}),
		item("itm_2", contract.FeedItemPublishedData{AuthorName: contract.PrivateAuthorName}),
	}
	for range 2 { // the second time is the broker redelivering the batch
		if err := projection.Handle(ctx, batch); err != nil {
			t.Fatalf("projection: %v", err)
		}
		if err := appender.Handle(ctx, batch); err != nil {
			t.Fatalf("appender: %v", err)
		}
	}

	rows, _, err := log.Read(ctx, FeedList, Start, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{batch[0].ID, batch[1].ID, batch[3].ID} // box and ada created, ada's item
	if got := ids(rows); !slices.Equal(got, want) {
		t.Errorf("feed log = %v, want %v: public creations and the public author's item, once each", got, want)
	}
	var row struct {
		Who struct {
			Svc  *string `json:"svc"`
			Name string  `json:"name"`
		} `json:"who"`
		Hash string `json:"hash"`
	}
	if len(rows) == 3 {
		if err := json.Unmarshal(rows[2].Data, &row); err != nil {
			t.Fatal(err)
		}
		if row.Hash != "svc_box" || row.Who.Svc == nil || *row.Who.Svc != "svc_ada" || row.Who.Name != "Ada" {
			t.Errorf("item row = %s, want box svc_box by svc_ada named Ada", rows[2].Data)
		}
	}
	box, _, err := log.Read(ctx, ObjectList("box"), Start, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(box), []string{batch[0].ID, batch[3].ID, batch[4].ID}; !slices.Equal(got, want) {
		t.Errorf("box's log = %v, want its creation and both items %v", got, want)
	}
	// The object's log holds the public payloads: the public author's id, which the event carries,
	// is left out, and the private author is named by nothing.
	payloads := map[string]events.Payload{}
	for _, e := range box {
		var p events.Payload
		if err := json.Unmarshal(e.Data, &p); err != nil {
			t.Fatal(err)
		}
		payloads[e.EventID] = p
	}
	if p := payloads[batch[3].ID]; p.Data["author_hash"] != "svc_ada" || p.Data["author_object_id"] != nil {
		t.Errorf("public author's item payload = %v, want author_hash svc_ada and no author_object_id", p.Data)
	}
	if p := payloads[batch[4].ID]; p.Data["author_hash"] != nil || p.Data["author_name"] != contract.PrivateAuthorName {
		t.Errorf("private author's item payload = %v, want a null author_hash and the private name", p.Data)
	}
}
