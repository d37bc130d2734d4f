// Package feed holds the use cases of feeds: turning a box into a feed, publishing, reading and
// hiding items. It owns the write order and the events each write produces.
package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/mongox"
)

// Tags are the tags an item may carry (spec "Feed rules").
var Tags = []string{"claim", "working", "blocked", "done"}

// Limits of an item's fields, in bytes.
const (
	MaxTitle = 200
	MaxBody  = 16 << 10
	// ItemPrefix starts every item id; ids are ULIDs, so they grow with time.
	ItemPrefix = "itm"
)

// Mailbox is what publishing needs of mailbox-svc, which owns sender blocks.
type Mailbox interface {
	BlockedHashes(ctx context.Context, objectID string) ([]string, error)
}

// Identity is what publishing needs of identity-svc: the author's current hash and name.
type Identity interface {
	Object(ctx context.Context, objectID string) (*contract.Object, error)
}

// Outbox stages the events of a write before it and relays them once it is done.
type Outbox interface {
	Stage(ctx context.Context, collection string, id any, evs ...events.Pending) error
	Confirm(evs ...events.Pending)
}

// Feeds runs the use cases.
type Feeds struct {
	Store    *store.Store
	Outbox   Outbox
	Mailbox  Mailbox
	Identity Identity
}

// Item is the public view of an item; a hidden item is a tombstone (Hidden true), which shows
// nothing but its id and date.
type Item struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Body     string   `json:"body"`
	Who      *Who     `json:"who"`
	Tags     []string `json:"tags"`
	PostedAt string   `json:"posted_at"`
	Hidden   bool     `json:"-"`
}

type tombstone struct {
	ID       string `json:"id"`
	Hidden   bool   `json:"hidden"`
	PostedAt string `json:"posted_at"`
}

// MarshalJSON renders a hidden item as its tombstone.
func (it Item) MarshalJSON() ([]byte, error) {
	if it.Hidden {
		return json.Marshal(tombstone{ID: it.ID, Hidden: true, PostedAt: it.PostedAt})
	}
	type plain Item
	return json.Marshal(plain(it))
}

// Who names an item's author: its current hash and its display name.
type Who struct {
	Svc  string `json:"svc"`
	Name string `json:"name"`
}

// Draft is what an author publishes.
type Draft struct {
	Title string
	Body  string
	Tags  []string
}

// Enable turns a box into a feed; doing it again changes nothing.
func (f *Feeds) Enable(ctx context.Context, box *authn.Target) (*store.Feed, error) {
	return f.Store.CreateFeed(ctx, store.Feed{ObjectID: box.ObjectID, CreatedAt: clock.Now()})
}

// Publish adds an item by author to the feed of box.
func (f *Feeds) Publish(ctx context.Context, box *authn.Target, author *authn.Principal, d Draft, requestID string) (*Item, error) {
	tags, err := validate(d)
	if err != nil {
		return nil, err
	}
	if err := f.readable(ctx, box, author); err != nil {
		return nil, err
	}
	who, err := f.Identity.Object(ctx, author.ObjectID)
	if err != nil {
		return nil, httpx.Unavailable(fmt.Errorf("identity author: %w", err))
	}
	blocked, err := f.Mailbox.BlockedHashes(ctx, box.ObjectID)
	if err != nil {
		return nil, httpx.Unavailable(fmt.Errorf("mailbox blocked senders: %w", err))
	}
	if slices.Contains(blocked, who.Hash) || slices.Contains(blocked, author.Hash) {
		return nil, httpx.Forbidden(httpx.CodeSenderBlocked, "this box blocks the publisher")
	}
	name := who.Title
	if name == "" {
		name = who.Hash
	}
	it := &store.Item{
		ID: apikey.NewID(ItemPrefix), FeedID: box.ObjectID, Title: d.Title, Body: d.Body, Tags: tags,
		AuthorID: author.ObjectID, AuthorHash: who.Hash, AuthorName: name, PostedAt: clock.Now(),
	}
	ev, err := itemPublished(box.ObjectID, box.Hash, requestID, it)
	if err != nil {
		return nil, err
	}
	it.Events = events.IDs(ev)
	if err := f.Outbox.Stage(ctx, store.Items, it.ID, ev); err != nil {
		return nil, err
	}
	if err := f.Store.InsertItem(ctx, it); err != nil {
		return nil, err
	}
	f.Outbox.Confirm(ev)
	return view(it, who.Hash), nil
}

// validate checks a draft and returns its tags without repeats, in the order given.
func validate(d Draft) ([]string, error) {
	title := strings.TrimSpace(d.Title)
	switch {
	case title == "":
		return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "title must not be empty")
	case len(d.Title) > MaxTitle || strings.ContainsAny(d.Title, "\r\n"):
		return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "title must be one line of at most %d bytes", MaxTitle)
	case len(d.Body) > MaxBody:
		return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "body must be at most %d bytes", MaxBody)
	case !utf8.ValidString(d.Title) || !utf8.ValidString(d.Body):
		return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "title and body must be UTF-8")
	case httpx.HasBidiControl(d.Title) || httpx.HasBidiControl(d.Body):
		return nil, httpx.RefuseBidiControls("title and body", d.Title+d.Body)
	}
	tags := []string{}
	for _, t := range d.Tags {
		if !slices.Contains(Tags, t) {
			return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "tag %q is not one of %s", t, strings.Join(Tags, ", "))
		}
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	return tags, nil
}

// readable refuses a private box to anyone but its owner with the 404 of an unknown object,
// and a box that is not a feed with 404.
func (f *Feeds) readable(ctx context.Context, box *authn.Target, caller *authn.Principal) error {
	if box.Visibility == "private" && (caller == nil || caller.ObjectID != box.ObjectID) {
		return httpx.NotFound("object")
	}
	ok, err := f.Store.IsFeed(ctx, box.ObjectID)
	if err != nil {
		return err
	}
	if !ok {
		return httpx.NotFound("feed")
	}
	return nil
}

// Page is one page of a feed, newest first.
type Page struct {
	Items      []Item  `json:"items"`
	NextCursor *string `json:"next_cursor"`
}

// Items reads a page of the feed of box: up to limit items older than the cursor item. Hidden
// items stay in place as tombstones, so pages keep their shape.
func (f *Feeds) Items(ctx context.Context, box *authn.Target, caller *authn.Principal, cursor string, limit int) (*Page, error) {
	if err := f.readable(ctx, box, caller); err != nil {
		return nil, err
	}
	list, err := f.Store.ItemsPage(ctx, box.ObjectID, cursor, limit+1)
	if err != nil {
		return nil, err
	}
	list, next := httpx.Page(list, limit, func(it store.Item) string { return it.ID })
	views, err := f.views(ctx, list)
	if err != nil {
		return nil, err
	}
	return &Page{Items: views, NextCursor: next}, nil
}

// Latest returns the latest n items of a box's feed that are not hidden, or none when the box is
// not a feed (the box page).
func (f *Feeds) Latest(ctx context.Context, boxID string, n int) ([]Item, error) {
	list, err := f.Store.ItemsPage(ctx, boxID, "", n*2+10)
	if err != nil {
		return nil, err
	}
	views, err := f.views(ctx, list)
	if err != nil {
		return nil, err
	}
	out := []Item{}
	for _, v := range views {
		if !v.Hidden && len(out) < n {
			out = append(out, v)
		}
	}
	return out, nil
}

// views renders items with their authors' current hashes, hidden ones as tombstones.
func (f *Feeds) views(ctx context.Context, list []store.Item) ([]Item, error) {
	ids := make([]string, 0, len(list))
	authors := make([]string, 0, len(list))
	for _, it := range list {
		ids = append(ids, it.ID)
		authors = append(authors, it.AuthorID)
	}
	hidden, err := f.Store.HiddenAmong(ctx, ids)
	if err != nil {
		return nil, err
	}
	hashes, err := f.Store.CurrentHashes(ctx, authors)
	if err != nil {
		return nil, err
	}
	out := make([]Item, 0, len(list))
	for i := range list {
		it := &list[i]
		if hidden[it.ID] {
			out = append(out, Item{ID: it.ID, PostedAt: clock.Format(it.PostedAt), Hidden: true})
			continue
		}
		out = append(out, *view(it, hashes[it.AuthorID]))
	}
	return out, nil
}

func view(it *store.Item, currentHash string) *Item {
	if currentHash == "" {
		currentHash = it.AuthorHash
	}
	tags := it.Tags
	if tags == nil {
		tags = []string{}
	}
	return &Item{ID: it.ID, Title: it.Title, Body: it.Body, Who: &Who{Svc: currentHash, Name: it.AuthorName},
		Tags: tags, PostedAt: clock.Format(it.PostedAt)}
}

// Hide hides an item of the box's feed (owner only; the gateway and the handler checked).
func (f *Feeds) Hide(ctx context.Context, box *authn.Target, itemID string) (string, error) {
	if _, err := f.Store.Item(ctx, box.ObjectID, itemID); err != nil {
		if errors.Is(err, mongox.ErrNotFound) {
			return "", httpx.NotFound("item")
		}
		return "", err
	}
	return itemID, f.Store.HideItem(ctx, store.Hide{ItemID: itemID, FeedID: box.ObjectID, HiddenAt: clock.Now()})
}

// ValidItemID is the cursor check of item pages.
func ValidItemID(s string) bool { return strings.HasPrefix(s, ItemPrefix+"_") && len(s) <= 64 }
