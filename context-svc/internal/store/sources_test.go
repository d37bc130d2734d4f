package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// TestRecordFetchNeverRewritesTheSourceDocument: a source document carries the source's pending
// event, and the relay acknowledges it with an update of that document. On FerretDB an update
// is read-then-rewrite, so a fetch recorded into the same document at the same moment either
// drops the fetched content or puts the acknowledged event back. Fetch results live in their own
// documents, so every round keeps both.
func TestRecordFetchNeverRewritesTheSourceDocument(t *testing.T) {
	t.Parallel()
	db := testkit.Database(t, testkit.Backends(t), "context")
	st := store.New(db, testkit.Logger(t))
	ctx := context.Background()
	const rounds = 40
	for i := range rounds {
		id := fmt.Sprintf("src_%03d", i)
		ev := events.MustNew(events.TopicContext, events.ContextSourceChanged, "obj_f", "svc_f", "", map[string]string{"source_id": id})
		src := &store.Source{ID: id, ObjectID: "obj_f", Kind: "url", URL: "https://example.com/" + id, Outbox: []events.Pending{ev}}
		if err := st.InsertSource(ctx, src, rounds); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := st.RecordFetch(ctx, id, "content of "+id, "", time.Now()); err != nil {
				t.Errorf("record fetch %s: %v", id, err)
			}
		})
		wg.Go(func() { // what the relay does once the event is published
			_, err := db.Collection(store.Sources).UpdateOne(ctx, mongox.ByID(id),
				bson.D{{Key: "$pullAll", Value: bson.D{{Key: events.OutboxField, Value: bson.A{ev}}}}})
			if err != nil {
				t.Errorf("acknowledge %s: %v", id, err)
			}
		})
		wg.Wait()
	}
	lostContent, backInOutbox := 0, 0
	for i := range rounds {
		id := fmt.Sprintf("src_%03d", i)
		got, err := st.SourcesByID(ctx, "obj_f", []string{id})
		if err != nil || len(got) != 1 {
			t.Fatalf("read %s: %v", id, err)
		}
		if got[0].Fetch == nil || got[0].Fetch.Content != "content of "+id {
			lostContent++
		}
		var raw struct {
			Outbox []bson.Raw `bson:"_outbox"`
		}
		if err := mongox.FindOne(ctx, db.Collection(store.Sources), mongox.ByID(id), &raw); err != nil {
			t.Fatal(err)
		}
		if len(raw.Outbox) > 0 {
			backInOutbox++
		}
	}
	if lostContent > 0 || backInOutbox > 0 {
		t.Fatalf("of %d rounds of a fetch recorded while the source's event was acknowledged: %d lost the content, %d put the event back",
			rounds, lostContent, backInOutbox)
	}
}

func TestFailedFetchKeepsTheLastGoodContent(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	if err := st.InsertSource(ctx, &store.Source{ID: "src_k", ObjectID: "obj_k", Kind: "url", URL: "https://example.com"}, 10); err != nil {
		t.Fatal(err)
	}
	good, bad := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond), time.Now().UTC().Truncate(time.Millisecond)
	if err := st.RecordFetch(ctx, "src_k", "first words", "", good); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordFetch(ctx, "src_k", "", "the page answered with status 500", bad); err != nil {
		t.Fatal(err)
	}
	got, err := st.SourcesByID(ctx, "obj_k", []string{"src_k"})
	if err != nil || len(got) != 1 || got[0].Fetch == nil {
		t.Fatalf("read the source: %+v, %v", got, err)
	}
	if f := got[0].Fetch; f.Content != "first words" || f.Error == "" || !f.FetchedAt.Equal(bad) {
		t.Fatalf("fetch state after a failure: got %+v, want the first words kept with the failure at %v", f, bad)
	}
}
