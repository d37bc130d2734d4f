package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/feed-svc/internal/consumers"

	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// directory stands in for identity-svc, which publishing calls only for a publisher that the
// projection does not know yet.
type directory struct{}

func (directory) Object(_ context.Context, id string) (*contract.Object, error) {
	return &contract.Object{ObjectID: id, Hash: "svc_" + id, Visibility: "public", Title: "Author " + id}, nil
}

// fixture is a feed-svc on the embedded store whose projections are fed with events, as the
// network consumer feeds them in the service.
type fixture struct {
	*Feeds
	box      *contract.Target
	consumer *consumers.Network
	db       *mongo.Database
}

func newFeeds(t *testing.T) *fixture {
	t.Helper()
	env := testkit.Backends(t)
	db := testkit.Database(t, env, "feed")
	if err := mongox.EnsureIndexes(context.Background(), db, append(store.Indexes, events.OutboxIndexes...)); err != nil {
		t.Fatal(err)
	}
	st := store.New(db)
	outbox := events.NewOutbox(db, events.NewProducer(env.Brokers, env.Name+"."), testkit.Logger(t), events.OutboxOptions{})
	opts, err := redis.ParseURL(env.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	tags := httpx.NewFeedTags(rdb, testkit.Logger(t))
	f := &fixture{
		Feeds:    &Feeds{Store: st, Outbox: outbox, Identity: directory{}, Tags: tags, PerDay: 1000},
		box:      &contract.Target{ObjectID: "box", Hash: "svc_box", Visibility: "public"},
		consumer: &consumers.Network{Store: st, Tags: tags},
		db:       db,
	}
	f.created(t, "box", "public", "The Box")
	if _, err := f.Enable(context.Background(), f.box); err != nil {
		t.Fatal(err)
	}
	return f
}

// feed hands events to the network consumer, as the broker would.
func (f *fixture) feed(t *testing.T, topic, typ, objectID, hash string, data any) {
	t.Helper()
	p := events.MustNew(topic, typ, objectID, hash, "", data)
	var ev events.Event
	if err := json.Unmarshal([]byte(p.Payload), &ev); err != nil {
		t.Fatal(err)
	}
	if err := f.consumer.Handle(context.Background(), []events.Event{ev}); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) created(t *testing.T, id, visibility, title string) {
	t.Helper()
	f.feed(t, events.TopicIdentity, events.ObjectCreated, id, "svc_"+id,
		contract.ObjectCreatedData{Object: contract.Object{ObjectID: id, Hash: "svc_" + id, Visibility: contract.Visibility(visibility), Title: title}})
}

func TestValidate(t *testing.T) {
	t.Parallel()
	long := make([]byte, MaxTitle+1)
	for i := range long {
		long[i] = 'a'
	}
	for name, tc := range map[string]struct {
		draft Draft
		ok    bool
	}{
		"plain":          {Draft{Title: "t", Body: "b", Tags: []string{"done"}}, true},
		"every tag":      {Draft{Title: "t", Tags: []string{"claim", "working", "blocked", "done"}}, true},
		"empty title":    {Draft{Title: "  "}, false},
		"two lines":      {Draft{Title: "a\nb"}, false},
		"long title":     {Draft{Title: string(long)}, false},
		"unknown tag":    {Draft{Title: "t", Tags: []string{"urgent"}}, false},
		"body too large": {Draft{Title: "t", Body: string(make([]byte, MaxBody+1))}, false},
	} {
		_, err := validate(tc.draft)
		if (err == nil) != tc.ok {
			t.Errorf("%s: validate = %v, want ok %v", name, err, tc.ok)
		}
	}
}

func TestCursorPagesHoldWhileItemsArrive(t *testing.T) {
	t.Parallel()
	f := newFeeds(t)
	box := f.box
	ctx := context.Background()
	author := &contract.Principal{ObjectID: "ada", Hash: "svc_ada"}
	for i := range 5 {
		if _, err := f.Publish(ctx, box, author, Draft{Title: fmt.Sprint("old ", i)}, ""); err != nil {
			t.Fatal(err)
		}
	}
	first, err := f.Items(ctx, box, nil, "", 2)
	if err != nil || first.Next == "" {
		t.Fatalf("first page: %v, %v", first, err)
	}
	// Items published concurrently while the reader pages do not shift its pages.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.Publish(ctx, box, author, Draft{Title: fmt.Sprint("new ", i)}, ""); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	seen := []string{first.Items[0].Title, first.Items[1].Title}
	for next := first.Next; next != ""; {
		page, err := f.Items(ctx, box, nil, next, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			seen = append(seen, it.Title)
		}
		next = page.Next
	}
	if fmt.Sprint(seen) != "[old 4 old 3 old 2 old 1 old 0]" {
		t.Errorf("paging from the first page saw %v, want the five old items once each, newest first", seen)
	}
	all, err := f.Items(ctx, box, nil, "", 200)
	if err != nil || len(all.Items) != 13 {
		t.Errorf("whole feed: %d items (%v), want 13", len(all.Items), err)
	}
}

func TestHideLeavesATombstoneAndBlockedAuthorsAreRefused(t *testing.T) {
	t.Parallel()
	f := newFeeds(t)
	box := f.box
	ctx := context.Background()
	f.created(t, "ada", "public", "Ada")
	f.created(t, "mallory", "public", "Mallory")
	// The block arrives as mailbox-svc's event; publishing reads the projection, no other service.
	block := contract.SenderBlockData{SenderObjectID: "mallory", SenderHash: "svc_mallory"}
	f.feed(t, events.TopicMailbox, events.SenderBlocked, "box", "svc_box", block)
	it, err := f.Publish(ctx, box, &contract.Principal{ObjectID: "ada"}, Draft{Title: "keep"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if it.Who == nil || it.Who.Svc == nil || *it.Who.Svc != "svc_ada" || it.Who.Name != "Ada" {
		t.Errorf("who = %+v, want svc_ada named Ada from the projection", it.Who)
	}
	if _, err := f.Publish(ctx, box, &contract.Principal{ObjectID: "mallory"}, Draft{Title: "spam"}, ""); apierr.As(err).Code != apierr.CodeSenderBlocked {
		t.Errorf("blocked author: %v, want SENDER_BLOCKED", err)
	}
	f.feed(t, events.TopicMailbox, events.SenderUnblocked, "box", "svc_box", block)
	if _, err := f.Publish(ctx, box, &contract.Principal{ObjectID: "mallory"}, Draft{Title: "welcome back"}, ""); err != nil {
		t.Errorf("unblocked author: %v, want published", err)
	}
	for range 2 { // hiding twice is one mark
		if _, err := f.Hide(ctx, box, it.ID); err != nil {
			t.Fatal(err)
		}
	}
	page, err := f.Items(ctx, box, nil, "", 10)
	if err != nil || len(page.Items) != 2 || !page.Items[1].Hidden || page.Items[0].Hidden {
		t.Fatalf("after hiding: %+v, %v; want mallory's item and a tombstone", page, err)
	}
	latest, err := f.Latest(ctx, box.ObjectID, 10)
	if err != nil || len(latest) != 1 || latest[0].Title != "welcome back" {
		t.Errorf("latest after hiding: %v, %v; want only mallory's item", latest, err)
	}
	if _, err := f.Hide(ctx, box, "itm_unknown"); apierr.As(err).Status != 404 {
		t.Errorf("hiding an unknown item: %v, want 404", err)
	}
	private := &contract.Target{ObjectID: "box", Hash: "svc_box", Visibility: "private"}
	if _, err := f.Items(ctx, private, &contract.Principal{ObjectID: "ada"}, "", 10); apierr.As(err).Status != 404 {
		t.Errorf("a private box read by another object: %v, want 404", err)
	}
	if err := f.readable(ctx, &contract.Target{ObjectID: "nofeed", Visibility: contract.Public}, ""); !errors.As(err, new(*apierr.Error)) {
		t.Errorf("a box that is not a feed: %v, want 404", err)
	}
}

func TestAuthorNamesFollowTheirEvents(t *testing.T) {
	t.Parallel()
	f := newFeeds(t)
	ctx := context.Background()
	// Not projected yet (created moments ago): identity-svc names it once.
	it, err := f.Publish(ctx, f.box, &contract.Principal{ObjectID: "newcomer"}, Draft{Title: "hello"}, "")
	if err != nil || it.Who.Svc == nil || *it.Who.Svc != "svc_newcomer" || it.Who.Name != "Author newcomer" {
		t.Fatalf("newcomer: %+v, %v", it, err)
	}
	f.created(t, "ada", "public", "Ada")
	f.feed(t, events.TopicContext, events.ContextUpdated, "ada", "svc_ada", contract.ContextUpdatedData{Version: 3, Title: "Ada Lovelace", Change: "llm_txt"})
	f.feed(t, events.TopicContext, events.ContextUpdated, "ada", "svc_ada", contract.ContextUpdatedData{Version: 2, Title: "Older title", Change: "llm_txt"})
	f.feed(t, events.TopicIdentity, events.ObjectHashChanged, "ada", "svc_ada_custom", contract.HashChangedData{Hash: "svc_ada_custom", PreviousHash: "svc_ada"})
	it, err = f.Publish(ctx, f.box, &contract.Principal{ObjectID: "ada"}, Draft{Title: "renamed"}, "")
	if err != nil || *it.Who.Svc != "svc_ada_custom" || it.Who.Name != "Ada Lovelace" {
		t.Fatalf("renamed author: %+v, %v; want the new hash and the newest title", it.Who, err)
	}
}

func TestPrivateAuthorIsNamedByNothing(t *testing.T) {
	t.Parallel()
	f := newFeeds(t)
	ctx := context.Background()
	f.created(t, "secret", "private", "Marker 7f3a")
	it, err := f.Publish(ctx, f.box, &contract.Principal{ObjectID: "secret", Hash: "svc_secret"}, Draft{Title: "from the dark"}, "req")
	if err != nil {
		t.Fatal(err)
	}
	page, err := f.Items(ctx, f.box, nil, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	latest, err := f.Latest(ctx, "box", 10)
	if err != nil {
		t.Fatal(err)
	}
	staged, err := mongox.FindAll[bson.M](ctx, f.db.Collection(events.OutboxCollection), bson.D{})
	if err != nil || len(staged) == 0 {
		t.Fatalf("staged events: %v, %v", staged, err)
	}
	for name, v := range map[string]any{"answer": it, "page": page, "latest": latest, "staged event": staged} {
		b, _ := json.Marshal(v)
		if strings.Contains(string(b), "Marker 7f3a") || strings.Contains(string(b), "svc_secret") || strings.Contains(string(b), `"secret"`) {
			t.Errorf("the %s names the private author: %s", name, b)
		}
	}
	if it.Who.Svc != nil || it.Who.Name != contract.PrivateAuthorName {
		t.Errorf("who = %+v, want {svc: null, name: %q}", it.Who, contract.PrivateAuthorName)
	}
}

func TestQuotaPerFeedPerDay(t *testing.T) {
	t.Parallel()
	f := newFeeds(t)
	f.PerDay = 3
	ctx := context.Background()
	f.created(t, "stranger", "public", "Stranger")
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[string]int{}
	for i := range 12 {
		wg.Go(func() {
			_, err := f.Publish(ctx, f.box, &contract.Principal{ObjectID: "stranger"}, Draft{Title: fmt.Sprint("spam ", i)}, "")
			code := "ok"
			if err != nil {
				e := apierr.As(err)
				code = fmt.Sprint(e.Status, " ", e.Code)
				if e.RetryAfter <= 0 {
					t.Errorf("refused without Retry-After: %v", err)
				}
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes["ok"] != 3 || codes["429 "+CodeQuotaExceeded] != 9 {
		t.Errorf("12 concurrent publishes with a quota of 3: %v, want 3 ok and 9 refused", codes)
	}
	// The owner's own items never compete with strangers' for the cap.
	if _, err := f.Publish(ctx, f.box, &contract.Principal{ObjectID: "box"}, Draft{Title: "mine"}, ""); err != nil {
		t.Errorf("the owner after strangers filled the cap: %v, want published", err)
	}
}

// TestQuotaCarriesTodayOverFromTheLists: an earlier release counted today's publishing in quota
// lists (mongox.Log entries "quota:<box>:<lane>:<day>#<n>"); after the upgrade step those places
// stay taken, so the lane gets what is left of its cap today, not the cap again; yesterday's lists
// are over, and the sweep removes the places of days gone.
func TestQuotaCarriesTodayOverFromTheLists(t *testing.T) {
	t.Parallel()
	f := newFeeds(t)
	f.PerDay = 3
	ctx := context.Background()
	f.created(t, "stranger", "public", "Stranger")
	now := clock.Now()
	lists := f.db.Collection(store.Lists)
	for _, id := range []string{
		"quota:box:others:" + now.UTC().Format(time.DateOnly) + "#1",
		"quota:box:others:" + now.UTC().Format(time.DateOnly) + "#2",
		"quota:box:others:" + now.UTC().Format(time.DateOnly) + "#head",
		"quota:box:owner:" + now.UTC().Add(-24*time.Hour).Format(time.DateOnly) + "#1",
	} {
		if _, err := lists.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "seq", Value: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	st := f.Store.(*store.Store)
	if n, err := st.UpgradeQuotas(ctx, now); err != nil || n != 2 {
		t.Fatalf("UpgradeQuotas = %d, %v; want today's 2 places", n, err)
	}
	if n, err := st.UpgradeQuotas(ctx, now); err != nil || n != 2 {
		t.Fatalf("UpgradeQuotas again = %d, %v; want the same 2, inserted once", n, err)
	}
	stranger := &contract.Principal{ObjectID: "stranger"}
	if _, err := f.Publish(ctx, f.box, stranger, Draft{Title: "third"}, ""); err != nil {
		t.Fatalf("the third publish of today: %v", err)
	}
	if _, err := f.Publish(ctx, f.box, stranger, Draft{Title: "fourth"}, ""); err == nil || apierr.As(err).Code != CodeQuotaExceeded {
		t.Fatalf("the fourth publish of today: %v, want %s", err, CodeQuotaExceeded)
	}
	if err := st.SweepQuotas(ctx, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Publish(ctx, f.box, stranger, Draft{Title: "after the sweep"}, ""); err != nil {
		t.Fatalf("a publish once the day's places are swept: %v", err)
	}
}
