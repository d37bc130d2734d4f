// Package consumers holds what feed-svc consumes: the domain events of every service, projected
// into the lists that the network's feed, activity, stats and analytics page through, and into
// the projections that publishing reads (objects, titles, sender blocks).
package consumers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/errgroup"

	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/controls"
	"github.com/svcdev/svc/pkg/events"
)

// The consumer groups of feed-svc: the network projection, and the event streams' logs
// (stream.Appender, which reads stream.Topics).
const (
	Group        = "network"
	StreamsGroup = "streams"
)

// Topics are the topics the network projection reads.
var Topics = []string{events.TopicIdentity, events.TopicContext, events.TopicMailbox, events.TopicClaims, events.TopicFeed}

// Validators are the feed validators (httpx.FeedTags) that a projected event retires.
type Validators interface {
	Changed(ctx context.Context, feed string)
}

// Network projects events. Every list append is keyed by the event id and every projection write
// is guarded by the event's order, so a redelivered event changes nothing.
type Network struct {
	Store *store.Store
	Tags  Validators
	// Controls records the block control version the projection has applied (pkg/controls),
	// which a publish compares with the box's latest; nil records nothing.
	Controls AppliedVersions
	// Service is the name the applied versions are recorded under.
	Service string

	once    sync.Once
	privacy *lru.Cache[string, bool] // objects' privacy by id
}

// AppliedVersions records the control versions a projection has applied (controls.Versions).
type AppliedVersions interface {
	Applied(ctx context.Context, service, kind, objectID string, version int64) error
}

// ErrUnknownObject says that an event names an object whose creation the projection has not
// seen yet: it arrives on another topic, so the event is retried until it has.
var ErrUnknownObject = errors.New("the object's creation is not projected yet")

// Handle projects a batch of events (an events.BatchHandler): first the objects' creations, all
// together; then the events other than items and messages, each object's in their order, up to
// objectWorkers objects at once; then all the batch's items and messages together (together).
// Creations, items and messages cost a few commands whatever their number. An object's creation
// is its first event, so it keeps its place before the object's others. Nothing that an item or
// a message depends on comes after it (its box's or recipient's creation comes before, and an
// object's visibility never changes; an item's rows name their box by id, not by its hash), and
// nothing of another kind depends on them, so they need no place among the other events; and
// the events of different objects had no order between them to keep (the partitioner puts keys
// together by chance). An object's items keep their order among themselves. The consumer hands
// over a whole fetch: split by key, a burst of sends or of publishing to many boxes would cost
// each object its own round of commands, and the thread.created before each new thread's first
// message would end every run of messages.
func (n *Network) Handle(ctx context.Context, evs []events.Event) error {
	var creations, counted []events.Event
	var others [][]events.Event
	at := map[string]int{}
	for _, ev := range evs {
		switch ev.Type {
		case events.ObjectCreated:
			creations = append(creations, ev)
		case events.MessageCreated, events.FeedItemPublished:
			counted = append(counted, ev)
		default:
			i, ok := at[ev.ObjectID]
			if !ok {
				i = len(others)
				at[ev.ObjectID] = i
				others = append(others, nil)
			}
			others[i] = append(others[i], ev)
		}
	}
	if err := n.created(ctx, creations); err != nil {
		return err
	}
	// Without a shared context: every object's events run to their end whatever the others do,
	// so what one wrote is kept, and a failed batch is handled again (each write is idempotent).
	var g errgroup.Group
	g.SetLimit(objectWorkers)
	for _, evs := range others {
		g.Go(func() error { return n.inOrder(ctx, evs) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return n.together(ctx, counted)
}

// objectWorkers bounds the objects whose events one batch projects at once.
const objectWorkers = 8

// inOrder projects one object's events in their order.
func (n *Network) inOrder(ctx context.Context, evs []events.Event) error {
	for _, ev := range evs {
		if err := n.project(ctx, ev); err != nil {
			return fmt.Errorf("project %s %s: %w", ev.Type, ev.ID, err)
		}
	}
	return nil
}

// together projects published items (items) and then counts them and messages, all in one
// Store.Tally: in their boxes' and recipients' analytics and, for a public object, in public
// activity and the network's message count.
func (n *Network) together(ctx context.Context, evs []events.Event) error {
	if len(evs) == 0 {
		return nil
	}
	ids := make([]string, len(evs))
	for i, ev := range evs {
		ids[i] = ev.ObjectID
	}
	private, err := n.private(ctx, ids)
	if err != nil {
		return fmt.Errorf("project %d items and messages: %w", len(evs), err)
	}
	var its []published
	ts := make([]store.Tally, 0, len(evs))
	for _, ev := range evs {
		at := eventTime(ev)
		if ev.Type == events.MessageCreated {
			ts = append(ts, n.tally(ev, at, store.CountMessages, private[ev.ObjectID], store.CounterMessages))
			continue
		}
		var d contract.FeedItemPublishedData
		if ev.Decode(&d) != nil {
			continue // a malformed event can never be projected; retrying would not help
		}
		its = append(its, published{eventID: ev.ID, it: ItemOf(ev, d)})
		ts = append(ts, n.tally(ev, at, store.CountFeedItems, private[ev.ObjectID]))
	}
	if err := n.items(ctx, its, private); err != nil {
		return fmt.Errorf("project %d items: %w", len(its), err)
	}
	if err := n.Store.Tally(ctx, ts); err != nil {
		return fmt.Errorf("project %d items and messages: %w", len(evs), err)
	}
	return nil
}

// tally is what counting ev means: in its object's analytics of kind (when not "") and, for a
// public object, as public activity and in the given network counters.
func (n *Network) tally(ev events.Event, at time.Time, kind string, private bool, counters ...string) store.Tally {
	t := store.Tally{EventID: ev.ID, ObjectID: ev.ObjectID, At: at, Kind: kind}
	if !private {
		t.Activity, t.Counters = &store.Activity{Type: ev.Type, BoxID: ev.ObjectID, At: at}, counters
	}
	return t
}

// private reports, of each object of ids, whether it is private: from what earlier events told
// (an object's visibility never changes), the rest in one read. ErrUnknownObject until every
// object's creation is projected.
func (n *Network) private(ctx context.Context, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	var ask []string
	for _, id := range ids {
		if p, ok := n.visibility().Get(id); ok {
			out[id] = p
		} else if !slices.Contains(ask, id) {
			ask = append(ask, id)
		}
	}
	found, err := n.Store.ObjectsOf(ctx, ask) // none asked: none read
	if err != nil {
		return nil, err
	}
	for _, id := range ask {
		o, ok := found[id]
		if !ok {
			return nil, ErrUnknownObject
		}
		out[id] = o.Private()
		n.visibility().Add(id, o.Private())
	}
	return out, nil
}

// visibility is the cache of objects' privacy, made on first use.
func (n *Network) visibility() *lru.Cache[string, bool] {
	n.once.Do(func() { n.privacy, _ = lru.New[string, bool](visibilityCache) })
	return n.privacy
}

// visibilityCache bounds the objects whose privacy the projection keeps in memory.
const visibilityCache = 65536

func eventTime(ev events.Event) time.Time { return timeOr(ev.Time, clock.Now()) }

// timeOr reads an RFC 3339 time, or is or when s is not one.
func timeOr(s string, or time.Time) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return or
	}
	return t
}

// changed retires a feed's validators; the network's feed's is retired as soon as its rows are
// appended, before the event's activity, so that a reader who sees the activity also sees a new
// validator.
func (n *Network) changed(ctx context.Context, feed string) {
	if n.Tags != nil {
		n.Tags.Changed(ctx, feed)
	}
}

// project projects one event other than an item or a message (Handle projects those together).
func (n *Network) project(ctx context.Context, ev events.Event) error {
	at := eventTime(ev)
	switch ev.Type {
	case events.ObjectHashChanged:
		var d contract.HashChangedData
		if ev.Decode(&d) != nil {
			return nil
		}
		if err := n.Store.SetHash(ctx, ev.ObjectID, d.Hash, at); err != nil {
			return err
		}
		n.changed(ctx, contract.NetworkFeed) // rows name boxes and authors by their current hash
		return n.activity(ctx, ev, at, "")
	case events.SenderBlocked, events.SenderUnblocked:
		var d contract.SenderBlockData
		if ev.Decode(&d) != nil {
			return nil
		}
		if err := n.Store.SetBlock(ctx, store.Block{ID: store.BlockID(ev.ObjectID, d.SenderObjectID),
			Blocked: ev.Type == events.SenderBlocked, At: at, Event: ev.ID}); err != nil {
			return err
		}
		if n.Controls == nil {
			return nil
		}
		return n.Controls.Applied(ctx, n.Service, controls.Blocks, ev.ObjectID, d.ControlVersion)
	case events.ContextUpdated:
		return n.contextUpdated(ctx, ev, at)
	case events.ClaimVerified, events.ClaimLapsed:
		return n.claim(ctx, ev, at)
	}
	return nil
}

// claim keeps the box page's badges (the object's verified claims) and counts the event.
func (n *Network) claim(ctx context.Context, ev events.Event, at time.Time) error {
	var d contract.ClaimVerifiedData
	if ev.Decode(&d) != nil {
		return nil
	}
	verified := ev.Type == events.ClaimVerified
	c := store.Claim{ID: d.ClaimID, ProofType: d.ProofType, Target: d.ClaimedTarget, VerifiedAt: timeOr(d.VerifiedAt, at)}
	if err := n.Store.SetClaim(ctx, ev.ObjectID, c, verified); err != nil {
		return err
	}
	if verified {
		return n.activity(ctx, ev, at, store.CountVerifiedClaims, store.CounterClaims)
	}
	return n.lapsed(ctx, ev)
}

// created stores objects' creations: for the public ones their rows of the network's feed, then
// the objects, then the public ones' activity, a few commands for them all. The rows come first,
// so that a box's items, which wait for the object, never race its creation row for the box's
// newest row.
func (n *Network) created(ctx context.Context, evs []events.Event) error {
	var objs []store.Object
	var rows []store.Row
	var acts []store.Tally
	for _, ev := range evs {
		var d contract.ObjectCreatedData
		if ev.Decode(&d) != nil {
			continue // a malformed event can never be projected; retrying would not help
		}
		at := eventTime(ev)
		o := store.Object{ID: ev.ObjectID, Hash: d.Hash, Visibility: d.Visibility, Title: d.Title, CreatedAt: at, HashAt: at}
		objs = append(objs, o)
		if !o.Private() {
			rows = append(rows, store.Row{Kind: store.KindNewSvc, EventID: ev.ID, BoxID: ev.ObjectID, Title: d.Title, At: at})
			acts = append(acts, n.tally(ev, at, "", false))
		}
	}
	if len(rows) > 0 {
		if err := n.Store.AddRows(ctx, rows, store.FeedAll, store.FeedCreated); err != nil {
			return fmt.Errorf("project %d creations: %w", len(evs), err)
		}
	}
	if err := n.Store.AddObjects(ctx, objs...); err != nil {
		return fmt.Errorf("project %d creations: %w", len(evs), err)
	}
	for _, o := range objs {
		n.visibility().Add(o.ID, o.Private())
	}
	if len(acts) == 0 {
		return nil
	}
	n.changed(ctx, contract.NetworkFeed)
	if err := n.Store.Tally(ctx, acts); err != nil { // public activity only: there is nothing to count
		return fmt.Errorf("project %d creations: %w", len(evs), err)
	}
	return nil
}

// contextUpdated records the object's profile title and counts the update. A decision-memory
// write is the owner's own work: it is counted for the owner's analytics but shows in no public
// activity, and changes no title.
func (n *Network) contextUpdated(ctx context.Context, ev events.Event, at time.Time) error {
	var d contract.ContextUpdatedData
	if ev.Decode(&d) != nil {
		return nil
	}
	if d.Change == "decision_memory" { // counted as a private object's event is: in analytics only
		return n.Store.Tally(ctx, []store.Tally{n.tally(ev, at, store.CountContextUpdates, true)})
	}
	if err := n.Store.SetTitle(ctx, store.Title{ObjectID: ev.ObjectID, Title: d.Title, Version: d.Version}); err != nil {
		return err
	}
	return n.activity(ctx, ev, at, store.CountContextUpdates)
}

// activity counts an event in its object's analytics (kind, when not "") and, for a public
// object, shows it as public activity and counts it in the given network counters.
func (n *Network) activity(ctx context.Context, ev events.Event, at time.Time, kind string, counters ...string) error {
	private, err := n.private(ctx, []string{ev.ObjectID})
	if err != nil {
		return err
	}
	return n.Store.Tally(ctx, []store.Tally{n.tally(ev, at, kind, private[ev.ObjectID], counters...)})
}

// lapsed counts a public object's lapsed claim out of the verified claims.
func (n *Network) lapsed(ctx context.Context, ev events.Event) error {
	private, err := n.private(ctx, []string{ev.ObjectID})
	if err != nil || private[ev.ObjectID] {
		return err
	}
	return n.Store.CountOnce(ctx, store.CounterClaims, -1, ev.ID)
}

// published is an item as its event announces it, with the event's id.
type published struct {
	eventID string
	it      store.Item
}

// ItemOf is the record publishing stored of the item that ev, a feed.item_published of data d,
// announces (a private author's id, hash and name are not in it, as publishing leaves them out).
func ItemOf(ev events.Event, d contract.FeedItemPublishedData) store.Item {
	it := store.Item{ID: d.ItemID, FeedID: ev.ObjectID, Title: d.Title, Body: d.Body, Tags: d.Tags,
		PostedAt: timeOr(d.PostedAt, eventTime(ev)), AuthorPrivate: d.AuthorHash == nil || d.AuthorObjectID == ""}
	if !it.AuthorPrivate {
		it.AuthorID, it.AuthorHash, it.AuthorName = d.AuthorObjectID, *d.AuthorHash, d.AuthorName
	}
	return it
}

// items projects published items: into their boxes' lists (again: this repairs a crash between
// publishing's two writes) and, for a public box and a public author, into the network's feed.
// private tells each box's visibility.
func (n *Network) items(ctx context.Context, ps []published, private map[string]bool) error {
	its := make([]store.Item, len(ps))
	for i, p := range ps {
		its[i] = p.it
	}
	added, err := n.Store.ListItems(ctx, its...)
	if err != nil {
		return err
	}
	changed := map[string]bool{}
	var rows []store.Row
	for i, p := range ps {
		if added[i] && !changed[p.it.FeedID] {
			changed[p.it.FeedID] = true
			n.changed(ctx, contract.BoxFeed(p.it.FeedID))
		}
		if !private[p.it.FeedID] && !p.it.AuthorPrivate {
			rows = append(rows, store.Row{Kind: store.KindItem, EventID: p.eventID, BoxID: p.it.FeedID, ItemID: p.it.ID,
				Title: p.it.Title, Body: p.it.Body, Tags: p.it.Tags, AuthorID: p.it.AuthorID, AuthorName: p.it.AuthorName, At: p.it.PostedAt})
		}
	}
	return n.networkRows(ctx, rows)
}

// networkRows adds items' rows to the network's feed, makes each box's newest of them its newest
// row, and takes the rows of an item out again when it was hidden meanwhile (a hide that ran
// before the rows were added found nothing to take out; one that runs after this check takes them
// out itself). The rows of an item hidden before are left out: a redelivered event of an item
// hidden since would otherwise add its rows and count them again, and the hide, which counts
// each item out once, would not count them out a second time.
func (n *Network) networkRows(ctx context.Context, rows []store.Row) error {
	rows, err := n.notHidden(ctx, rows)
	if err != nil || len(rows) == 0 {
		return err
	}
	if err := n.Store.AddRows(ctx, rows, store.FeedAll, store.FeedItems); err != nil {
		return err
	}
	var boxes, ids []string
	for _, r := range rows {
		if !slices.Contains(boxes, r.BoxID) {
			boxes = append(boxes, r.BoxID)
		}
		ids = append(ids, r.ItemID)
	}
	if err := n.Store.CountOnce(ctx, store.CounterBoxesWithItems, 1, boxes...); err != nil {
		return err
	}
	hidden, err := n.Store.HiddenOf(ctx, ids)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if hidden[r.ItemID] {
			if err := n.Store.UnlistItem(ctx, r); err != nil {
				return err
			}
		}
	}
	n.changed(ctx, contract.NetworkFeed)
	return nil
}

// notHidden are the rows of items not hidden: one find by _id.
func (n *Network) notHidden(ctx context.Context, rows []store.Row) ([]store.Row, error) {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ItemID
	}
	hidden, err := n.Store.HiddenOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(rows, func(r store.Row) bool { return hidden[r.ItemID] }), nil
}
