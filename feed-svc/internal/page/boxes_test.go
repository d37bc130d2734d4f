package page

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/svcdev/svc/feed-svc/internal/feed"
	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// objects stands in for identity-svc: the objects it knows, by hash.
type objects map[string]*identity.Object

func (o objects) Resolve(_ context.Context, hash string) (*identity.Object, error) {
	if obj, ok := o[hash]; ok {
		return obj, nil
	}
	return nil, identity.ErrNotFound
}

// profiles stands in for context-svc: every profile is a heading naming the object.
type profiles struct{}

func (profiles) ComposedProfile(_ context.Context, objectID, _ string) (string, error) {
	return "# Box " + objectID + "\n\nAbout it.\n", nil
}

// latest stands in for the feed's use case: one item for every feed.
type latest struct{}

func (latest) Latest(_ context.Context, boxID string, _ int) ([]feed.Item, error) {
	return []feed.Item{{ID: "itm_" + boxID, Title: "news"}}, nil
}

// TestBoxPage builds box pages from identity-svc's answer, context-svc's profile and feed-svc's
// own store: an unknown box and a private one seen by anyone else are ErrNoBox, a private box is
// its own key's to see, and a public feed shows its items and the badges the store holds.
func TestBoxPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testkit.Backends(t)
	st := store.New(testkit.Database(t, env, "page")) // every read and write here is by _id

	created := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for _, o := range []store.Object{
		{ID: "obj_pub", Hash: "svc_pub", Visibility: contract.Public, CreatedAt: created, HashAt: created.Add(time.Hour)},
		{ID: "obj_priv", Hash: "svc_priv", Visibility: contract.Private, CreatedAt: created, HashAt: created},
	} {
		if err := st.AddObjects(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.CreateFeed(ctx, store.Feed{ObjectID: "obj_pub", CreatedAt: created}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetClaim(ctx, "obj_pub", store.Claim{ID: "clm_1", ProofType: "domain", Target: "example.com", VerifiedAt: created}, true); err != nil {
		t.Fatal(err)
	}
	boxes := &Boxes{Store: st, Profiles: profiles{}, Items: latest{}, Resolver: objects{
		"svc_pub":  {ObjectID: "obj_pub", Hash: "svc_pub", Visibility: contract.Public, MailboxStatus: "claimed"},
		"svc_priv": {ObjectID: "obj_priv", Hash: "svc_priv", Visibility: contract.Private, MailboxStatus: "unclaimed"},
	}}

	for name, c := range map[string]struct{ hash, viewer string }{
		"unknown":                 {"svc_nobody", ""},
		"private, anonymous":      {"svc_priv", ""},
		"private, another object": {"svc_priv", "obj_pub"},
	} {
		if _, err := boxes.Box(ctx, c.hash, c.viewer); !errors.Is(err, ErrNoBox) {
			t.Errorf("%s: %v, want ErrNoBox", name, err)
		}
	}
	own, err := boxes.Box(ctx, "svc_priv", "obj_priv")
	if err != nil || own.Hash != "svc_priv" || own.IsFeed || own.Items != nil || own.Title != "Box obj_priv" {
		t.Fatalf("the private box to itself: %+v, %v", own, err)
	}
	pub, err := boxes.Box(ctx, "svc_pub", "")
	if err != nil {
		t.Fatal(err)
	}
	if !pub.IsFeed || len(pub.Items) != 1 || !pub.Claimed || !pub.CustomHash || !pub.Since.Equal(created) ||
		len(pub.Claims) != 1 || pub.Claims[0].Target != "example.com" {
		t.Errorf("the public feed's page: %+v", pub)
	}
}
