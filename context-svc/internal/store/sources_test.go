package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
)

func rawSource(t *testing.T, db *mongo.Database, id string) bson.Raw {
	t.Helper()
	raw, err := db.Collection(store.Sources).FindOne(context.Background(), mongox.ByID(id)).Raw()
	if err != nil {
		t.Fatalf("read source %s: %v", id, err)
	}
	return raw
}

// TestRecordFetchNeverRewritesTheSourceDocument: a source document records the id of the event
// staged with it, and documents that record event ids are inserted once and never rewritten (the
// outbox reads them to tell a write that happened from one that did not). Readers that refresh a
// URL source at the same time each record their fetch; the source document stays byte for byte
// as inserted, and one of the fetched contents is read back.
func TestRecordFetchNeverRewritesTheSourceDocument(t *testing.T) {
	t.Parallel()
	st, outbox, db := newStoreDB(t)
	ctx := context.Background()
	const sources, readers = 10, 4
	for i := range sources {
		id := fmt.Sprintf("src_%03d", i)
		ev := events.MustNew(events.TopicContext, events.ContextSourceChanged, "obj_f", "svc_f", "", map[string]string{"source_id": id})
		src := &store.Source{ID: id, ObjectID: "obj_f", Kind: "url", URL: "https://example.com/" + id}
		if err := st.InsertSource(ctx, src, sources, outbox, ev); err != nil {
			t.Fatal(err)
		}
		inserted := rawSource(t, db, id)
		var wg sync.WaitGroup
		for r := range readers {
			wg.Go(func() {
				if err := st.RecordFetch(ctx, id, fmt.Sprintf("content %d of %s", r, id), "", time.Now()); err != nil {
					t.Errorf("record fetch %s: %v", id, err)
				}
			})
		}
		wg.Wait()
		if now := rawSource(t, db, id); !bytes.Equal(now, inserted) {
			t.Fatalf("source %s after %d fetches:\n%v\nwant it as inserted:\n%v", id, readers, now, inserted)
		}
		got, err := st.SourcesByID(ctx, "obj_f", []string{id})
		if err != nil || len(got) != 1 || got[0].Fetch == nil || got[0].Fetch.Content == "" {
			t.Fatalf("read %s after its fetches: %+v, %v; want one of the fetched contents", id, got, err)
		}
	}
}

func TestFailedFetchKeepsTheLastGoodContent(t *testing.T) {
	t.Parallel()
	st, outbox := newStore(t)
	ctx := context.Background()
	if err := st.InsertSource(ctx, &store.Source{ID: "src_k", ObjectID: "obj_k", Kind: "url", URL: "https://example.com"}, 10, outbox); err != nil {
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

func TestSourceLimitRefusesPastTheLastSlot(t *testing.T) {
	t.Parallel()
	st, outbox := newStore(t)
	ctx := context.Background()
	for i := range 3 {
		err := st.InsertSource(ctx, &store.Source{ID: fmt.Sprintf("src_%d", i), ObjectID: "obj_l", Kind: "text", Text: "x"}, 2, outbox)
		if full := i >= 2; full != errors.Is(err, store.ErrSourceLimit) || (!full && err != nil) {
			t.Fatalf("source %d of a limit of 2: got %v", i+1, err)
		}
	}
	if all, _, err := st.ListSources(ctx, store.SourcePage{ObjectID: "obj_l", Limit: 10}); err != nil || len(all) != 2 {
		t.Fatalf("sources stored: got %d, %v; want 2", len(all), err)
	}
}
