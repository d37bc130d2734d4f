package mongox_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

type keyed struct {
	ID string `bson:"_id"`
	N  int    `bson:"n"`
}

// TestRangePages: a list is read in pages of its _id range, both ways and from a cursor, and never
// shows a document of a neighbouring scope (one whose scope is a prefix of the list's, or next to it).
func TestRangePages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	coll := testkit.Database(t, testkit.Backends(t), "mongox").Collection("ranges")
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	scope := mongox.Scope("box", "obj1")
	var want []string
	var docs []keyed
	for i := range 25 {
		id := mongox.Key("box", "obj1", mongox.Time(base.Add(time.Duration(i)*time.Second)), fmt.Sprintf("t%02d", i))
		want = append(want, id)
		docs = append(docs, keyed{ID: id, N: i})
	}
	// Neighbours: another object whose id extends this one, and the scopes just around it.
	for _, id := range []string{mongox.Key("box", "obj10", "x"), mongox.Key("box", "obj0", "y"), "box|obj1", mongox.Key("boy", "obj1", "z")} {
		docs = append(docs, keyed{ID: id})
	}
	if _, err := mongox.InsertNew(ctx, coll, docs); err != nil {
		t.Fatal(err)
	}
	// pages reads r page by page, each from the last _id of the one before.
	pages := func(r mongox.Range) []string {
		var ids []string
		for {
			page, err := mongox.Find[keyed](ctx, coll, r)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range page {
				ids = append(ids, d.ID)
			}
			if len(page) < r.Limit {
				return ids
			}
			if r.Desc {
				r.Before = page[len(page)-1].ID
			} else {
				r.After = page[len(page)-1].ID
			}
		}
	}
	if got := pages(mongox.Range{Scope: scope, Limit: 10}); !slices.Equal(got, want) {
		t.Fatalf("ascending pages:\n got %q\nwant %q", got, want)
	}
	var sizes []int
	var all []string
	if err := mongox.Pages(ctx, coll, mongox.Range{Scope: scope, Limit: 10}, func(d keyed) string { return d.ID }, func(page []keyed) error {
		sizes = append(sizes, len(page))
		for _, d := range page {
			all = append(all, d.ID)
		}
		return nil
	}); err != nil || !slices.Equal(all, want) || !slices.Equal(sizes, []int{10, 10, 5}) {
		t.Fatalf("Pages: pages of %v, %v:\n got %q\nwant %q", sizes, err, all, want)
	}
	got := pages(mongox.Range{Scope: scope, Desc: true, Limit: 7})
	slices.Reverse(got)
	if !slices.Equal(got, want) {
		t.Fatalf("descending pages:\n got %q\nwant %q", got, want)
	}
	n, err := mongox.DeleteRange(ctx, coll, mongox.Range{Scope: scope, Before: want[5]})
	if err != nil || n != 5 {
		t.Fatalf("deleted %d (%v), want the 5 before the sixth", n, err)
	}
}

func TestKeyParts(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 1, 2, 3, 456789000, time.UTC)
	if got, err := mongox.ParseTime(mongox.Time(at)); err != nil || !got.Equal(at.Truncate(time.Microsecond)) {
		t.Errorf("time part round trip: %v %v", got, err)
	}
	if mongox.Time(at) >= mongox.Time(at.Add(time.Microsecond)) || mongox.Seq(9) >= mongox.Seq(10) {
		t.Error("parts do not sort as their values")
	}
	if n, err := mongox.ParseSeq(mongox.Seq(1234)); err != nil || n != 1234 {
		t.Errorf("seq part round trip: %d %v", n, err)
	}
	for _, bad := range []string{"a|b", "a b", `a"b`, "é", "a/b"} {
		if mongox.KeyPart(bad) {
			t.Errorf("%q accepted as a key part", bad)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Key took a part with the separator")
		}
	}()
	mongox.Key("a", "b|c")
}

// TestIDPart: an id of the key alphabet is its own key part; any other id is encoded into one,
// distinct from every id of the alphabet.
func TestIDPart(t *testing.T) {
	for id, want := range map[string]string{
		"obj_01abc":  "obj_01abc",
		"obj:node/1": "~6f626a3a6e6f64652f31",
		"~x":         "~7e78",
		"":           "~",
	} {
		if got := mongox.IDPart(id); got != want || !mongox.KeyPart(got) {
			t.Errorf("IDPart(%q) = %q, want %q", id, got, want)
		}
	}
}
