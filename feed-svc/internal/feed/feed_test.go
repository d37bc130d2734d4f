package feed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// directory stands in for identity-svc and mailbox-svc, which are other services.
type directory struct{ blocked []string }

func (d directory) Object(_ context.Context, id string) (*contract.Object, error) {
	return &contract.Object{ObjectID: id, Hash: "svc_" + id, Title: "Author " + id}, nil
}

func (d directory) BlockedHashes(context.Context, string) ([]string, error) { return d.blocked, nil }

func newFeeds(t *testing.T, blocked ...string) (*Feeds, *authn.Target) {
	t.Helper()
	env := testkit.Backends(t)
	db := testkit.Database(t, env, "feed")
	if err := mongox.EnsureIndexes(context.Background(), db, append(store.Indexes, events.OutboxIndexes...)); err != nil {
		t.Fatal(err)
	}
	st := store.New(db)
	outbox := events.NewOutbox(db, events.NewProducer(env.Brokers, env.Name+"."), testkit.Logger(t), events.OutboxOptions{})
	f := &Feeds{Store: st, Outbox: outbox, Mailbox: directory{blocked}, Identity: directory{blocked}}
	box := &authn.Target{ObjectID: "box", Hash: "svc_box", Visibility: "public"}
	if _, err := f.Enable(context.Background(), box); err != nil {
		t.Fatal(err)
	}
	return f, box
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
	f, box := newFeeds(t)
	ctx := context.Background()
	author := &authn.Principal{ObjectID: "ada", Hash: "svc_ada"}
	for i := range 5 {
		if _, err := f.Publish(ctx, box, author, Draft{Title: fmt.Sprint("old ", i)}, ""); err != nil {
			t.Fatal(err)
		}
	}
	first, err := f.Items(ctx, box, nil, "", 2)
	if err != nil || first.NextCursor == nil {
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
	cursor := first.NextCursor
	for cursor != nil {
		raw, err := decodeCursor(*cursor)
		if err != nil {
			t.Fatal(err)
		}
		page, err := f.Items(ctx, box, nil, raw, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			seen = append(seen, it.Title)
		}
		cursor = page.NextCursor
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
	f, box := newFeeds(t, "svc_mallory")
	ctx := context.Background()
	it, err := f.Publish(ctx, box, &authn.Principal{ObjectID: "ada"}, Draft{Title: "keep"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Publish(ctx, box, &authn.Principal{ObjectID: "mallory"}, Draft{Title: "spam"}, ""); httpx.AsError(err).Code != httpx.CodeSenderBlocked {
		t.Errorf("blocked author: %v, want SENDER_BLOCKED", err)
	}
	for range 2 { // hiding twice is one mark
		if _, err := f.Hide(ctx, box, it.ID); err != nil {
			t.Fatal(err)
		}
	}
	page, err := f.Items(ctx, box, nil, "", 10)
	if err != nil || len(page.Items) != 1 || !page.Items[0].Hidden {
		t.Fatalf("after hiding: %+v, %v; want one tombstone", page, err)
	}
	latest, err := f.Latest(ctx, box.ObjectID, 10)
	if err != nil || len(latest) != 0 {
		t.Errorf("latest after hiding: %v, %v; want none", latest, err)
	}
	if _, err := f.Hide(ctx, box, "itm_unknown"); httpx.AsError(err).Status != 404 {
		t.Errorf("hiding an unknown item: %v, want 404", err)
	}
	private := &authn.Target{ObjectID: "box", Hash: "svc_box", Visibility: "private"}
	if _, err := f.Items(ctx, private, &authn.Principal{ObjectID: "ada"}, "", 10); httpx.AsError(err).Status != 404 {
		t.Errorf("a private box read by another object: %v, want 404", err)
	}
	if err := f.readable(ctx, &authn.Target{ObjectID: "nofeed", Visibility: "public"}, nil); !errors.As(err, new(*httpx.Error)) {
		t.Errorf("a box that is not a feed: %v, want 404", err)
	}
}
