// Package feed holds the use cases of feeds: turning a box into a feed, publishing, reading and
// hiding items. It owns the write order and the events each write produces.
package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
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

// Identity is what publishing needs of identity-svc, only for a publisher that the projection of
// identity's events does not know yet (created moments ago): its hash, visibility and title.
type Identity interface {
	Object(ctx context.Context, objectID string) (*contract.Object, error)
}

// Outbox stages the events of a write before it and relays them once it is done.
type Outbox interface {
	Stage(ctx context.Context, collection string, id any, evs ...events.Pending) error
	Confirm(evs ...events.Pending)
}

// Validators are the feed validators (httpx.FeedTags) that a write retires.
type Validators interface {
	Changed(ctx context.Context, feed string)
}

// FeedStore is what the feed use cases read and write: feeds, items and their marks, and the
// projections of blocks and objects.
type FeedStore interface {
	Blocks(ctx context.Context, boxID, senderID string) (bool, error)
	CreateFeed(ctx context.Context, f store.Feed) (*store.Feed, error)
	HideItem(ctx context.Context, h store.Hide) error
	HideRows(ctx context.Context, it *store.Item) error
	InsertItem(ctx context.Context, it *store.Item) error
	IsFeed(ctx context.Context, objectID string) (bool, error)
	Item(ctx context.Context, feedID, itemID string) (*store.Item, error)
	ItemsPage(ctx context.Context, feedID, before string, limit int) ([]store.ListedItem, string, error)
	ListItems(ctx context.Context, items ...store.Item) ([]bool, error)
	Name(ctx context.Context, o *store.Object) (string, error)
	Object(ctx context.Context, objectID string) (*store.Object, error)
	ObjectsOf(ctx context.Context, ids []string) (map[string]*store.Object, error)
	Tombstone(ctx context.Context, it *store.Item) error
	TakeSlot(ctx context.Context, q store.Quota, limit int) (bool, error)
}

// Feeds runs the use cases. Blocks, authors' names, hashes and visibility come from feed-svc's
// own projections of mailbox-svc's, identity-svc's and context-svc's events.
type Feeds struct {
	Store    FeedStore
	Outbox   Outbox
	Identity Identity
	Tags     Validators
	// Mailbox tells whether a box blocks a publisher now, and BlockGuard when it must be asked
	// (see blocked); with either nil, the projection of the blocks alone answers.
	Mailbox    BlockOwner
	BlockGuard BlockGuard
	// PerDay is how many items one feed takes per UTC day from others, and again from its owner:
	// the owner's items never compete with strangers' for one cap.
	PerDay int
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

// Who names an item's author: its current hash and its display name. A private author is
// {svc: null, name: "a private object"} (PrivateWho) wherever it is shown.
type Who struct {
	Svc  *string `json:"svc"`
	Name string  `json:"name"`
}

// PrivateWho is the author of an item published by a private object.
func PrivateWho() *Who { return &Who{Name: contract.PrivateAuthorName} }

// PublicWho names a public author.
func PublicWho(hash, name string) *Who { return &Who{Svc: &hash, Name: name} }

// Draft is what an author publishes.
type Draft struct {
	Title string
	Body  string
	Tags  []string
}

// Enable turns a box into a feed; doing it again changes nothing.
func (f *Feeds) Enable(ctx context.Context, box *contract.Target) (*store.Feed, error) {
	return f.Store.CreateFeed(ctx, store.Feed{ObjectID: box.ObjectID, CreatedAt: clock.Now()})
}

// Publish adds an item by author to the feed of box.
func (f *Feeds) Publish(ctx context.Context, box *contract.Target, author *contract.Principal, d Draft, requestID string) (*Item, error) {
	tags, err := validate(d)
	if err != nil {
		return nil, err
	}
	// A publisher acts with its key's write scope, which the gateway checked: it needs no read.
	if err := f.readable(ctx, box, author.ObjectID); err != nil {
		return nil, err
	}
	blocked, err := f.blocked(ctx, box.ObjectID, author.ObjectID)
	if err != nil {
		return nil, err
	}
	if blocked {
		return nil, apierr.Forbidden(apierr.CodeSenderBlocked, "this box blocks the publisher")
	}
	who, err := f.author(ctx, author)
	if err != nil {
		return nil, err
	}
	now := clock.Now()
	if err := f.takeSlot(ctx, box, author, now); err != nil {
		return nil, err
	}
	it := &store.Item{ID: apikey.NewID(ItemPrefix), FeedID: box.ObjectID, Title: d.Title, Body: d.Body, Tags: tags, PostedAt: now}
	if who.Private() {
		it.AuthorPrivate = true
	} else {
		it.AuthorID, it.AuthorHash, it.AuthorName = author.ObjectID, who.Hash, who.Title
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
	if _, err := f.Store.ListItems(ctx, *it); err != nil {
		return nil, err // the item's event lists it again (store.ListItems)
	}
	f.Outbox.Confirm(ev)
	f.Tags.Changed(ctx, contract.BoxFeed(box.ObjectID))
	return view(it, nil), nil
}

// author returns the publisher as the projection knows it, with its name in Title; a publisher
// created moments ago, whose creation the projection has not seen yet, is read from identity-svc.
func (f *Feeds) author(ctx context.Context, p *contract.Principal) (*store.Object, error) {
	o, err := f.Store.Object(ctx, p.ObjectID)
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		obj, err := f.Identity.Object(ctx, p.ObjectID)
		if err != nil {
			return nil, apierr.Unavailable(fmt.Errorf("identity author: %w", err))
		}
		o = &store.Object{ID: obj.ObjectID, Hash: obj.Hash, Visibility: obj.Visibility, Title: obj.Title}
	case err != nil:
		return nil, err
	default:
		if o.Title, err = f.Store.Name(ctx, o); err != nil {
			return nil, err
		}
	}
	if o.Title == "" {
		o.Title = o.Hash
	}
	return o, nil
}

// takeSlot takes a publishing slot of the box's feed for today: the owner's lane or the others'.
func (f *Feeds) takeSlot(ctx context.Context, box *contract.Target, author *contract.Principal, now time.Time) error {
	lane := store.LaneOthers
	if author.ObjectID == box.ObjectID {
		lane = store.LaneOwner
	}
	ok, err := f.Store.TakeSlot(ctx, store.QuotaOf(box.ObjectID, lane, now), f.PerDay)
	if err != nil {
		return err
	}
	if !ok {
		next := now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
		e := apierr.Errorf(http.StatusTooManyRequests, CodeQuotaExceeded,
			"this feed took its %d items of today from this publisher's lane: publish again after Retry-After seconds", f.PerDay)
		e.RetryAfter = next.Sub(now)
		return e
	}
	return nil
}

// CodeQuotaExceeded is the code of a publish refused by the feed's daily quota (429).
const CodeQuotaExceeded = "QUOTA_EXCEEDED"

// validate checks a draft and returns its tags without repeats, in the order given.
func validate(d Draft) ([]string, error) {
	title := strings.TrimSpace(d.Title)
	switch {
	case title == "":
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "title must not be empty")
	case len(d.Title) > MaxTitle || strings.ContainsAny(d.Title, "\r\n"):
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "title must be one line of at most %d bytes", MaxTitle)
	case len(d.Body) > MaxBody:
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "body must be at most %d bytes", MaxBody)
	case !utf8.ValidString(d.Title) || !utf8.ValidString(d.Body):
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "title and body must be UTF-8")
	case apierr.HasBidiControl(d.Title) || apierr.HasBidiControl(d.Body):
		return nil, apierr.RefuseBidiControls("title and body", d.Title+d.Body)
	}
	tags := []string{}
	for _, t := range d.Tags {
		if !slices.Contains(Tags, t) {
			return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "tag %q is not one of %s", t, strings.Join(Tags, ", "))
		}
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	return tags, nil
}

// readable refuses a box viewer may not learn of (contract.Visible) with the 404 of an unknown
// object, and a box that is not a feed with 404.
func (f *Feeds) readable(ctx context.Context, box *contract.Target, viewer string) error {
	if !contract.Visible(box.Visibility, box.ObjectID, viewer) {
		return apierr.NotFound("object")
	}
	ok, err := f.Store.IsFeed(ctx, box.ObjectID)
	if err != nil {
		return err
	}
	if !ok {
		return apierr.NotFound("feed")
	}
	return nil
}

// Page is one page of a feed, newest first; Next is the key of the following page ("": none).
type Page struct {
	Items []Item
	Next  string
}

// Items reads a page of the feed of box: up to limit items below the key before ("": from the
// newest). Hidden items stay in place as tombstones, so pages keep their shape.
func (f *Feeds) Items(ctx context.Context, box *contract.Target, caller *contract.Principal, before string, limit int) (*Page, error) {
	if err := f.readable(ctx, box, caller.Viewer()); err != nil {
		return nil, err
	}
	views, next, err := f.views(ctx, box.ObjectID, before, limit)
	if err != nil {
		return nil, err
	}
	return &Page{Items: views, Next: next}, nil
}

// Latest returns the latest n items of a box's feed that are not hidden (the box page); it reads
// at most a few pages' worth, so a run of hidden items shortens the list rather than lengthening
// the read.
func (f *Feeds) Latest(ctx context.Context, boxID string, n int) ([]Item, error) {
	views, _, err := f.views(ctx, boxID, "", 2*n+10)
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

// views reads a page of a box's list (store.ItemsPage) and renders its items with their authors'
// current hashes (one find of the authors by _id), hidden ones as tombstones.
func (f *Feeds) views(ctx context.Context, boxID, before string, limit int) ([]Item, string, error) {
	entries, next, err := f.Store.ItemsPage(ctx, boxID, before, limit)
	if err != nil {
		return nil, "", err
	}
	authors := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.Hidden && !e.AuthorPrivate {
			authors = append(authors, e.AuthorID)
		}
	}
	objects, err := f.Store.ObjectsOf(ctx, authors)
	if err != nil {
		return nil, "", err
	}
	out := make([]Item, 0, len(entries))
	for i := range entries {
		it := &entries[i].Item
		if entries[i].Hidden {
			out = append(out, Item{ID: it.ID, PostedAt: clock.Format(it.PostedAt), Hidden: true})
			continue
		}
		out = append(out, *view(it, objects[it.AuthorID]))
	}
	return out, next, nil
}

// view renders an item; author, when known, gives the author's current hash.
func view(it *store.Item, author *store.Object) *Item {
	tags := it.Tags
	if tags == nil {
		tags = []string{}
	}
	v := &Item{ID: it.ID, Title: it.Title, Body: it.Body, Tags: tags, PostedAt: clock.Format(it.PostedAt)}
	switch {
	case it.AuthorPrivate:
		v.Who = PrivateWho()
	case author != nil:
		v.Who = PublicWho(author.Hash, it.AuthorName)
	default:
		v.Who = PublicWho(it.AuthorHash, it.AuthorName)
	}
	return v
}

// Hide hides an item of the box's feed (owner only; the gateway and the handler checked). An
// item that the network's feed shows is counted out of its totals.
func (f *Feeds) Hide(ctx context.Context, box *contract.Target, itemID string) (string, error) {
	it, err := f.Store.Item(ctx, box.ObjectID, itemID)
	if err != nil {
		if errors.Is(err, mongox.ErrNotFound) {
			return "", apierr.NotFound("item")
		}
		return "", err
	}
	if err := f.Store.HideItem(ctx, store.Hide{ItemID: itemID, FeedID: box.ObjectID, HiddenAt: clock.Now()}); err != nil {
		return "", err
	}
	if err := f.Store.Tombstone(ctx, it); err != nil {
		return "", err
	}
	if contract.Visible(box.Visibility, box.ObjectID, "") && !it.AuthorPrivate {
		if err := f.Store.HideRows(ctx, it); err != nil {
			return "", err
		}
		f.Tags.Changed(ctx, contract.NetworkFeed)
	}
	f.Tags.Changed(ctx, contract.BoxFeed(box.ObjectID))
	return itemID, nil
}
