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
	"github.com/svcdev/svc/pkg/mongox"
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

// Handle projects a batch of events (an events.BatchHandler): the events other than messages
// each object's in their order, up to objectWorkers objects at once, then all the batch's
// messages counted together (Store.Tally: a few commands whatever their number, one analytics
// update per recipient). Nothing that a message's count depends on comes after it (its
// recipient's creation comes before, and its visibility never changes), and nothing depends on
// it, so the messages need no place among the other events; and the events of different objects
// had no order between them to keep (the partitioner puts keys together by chance). The consumer
// hands over a whole fetch: split by key, a burst of sends to many recipients would cost each
// recipient its own round of commands, and the thread.created before each new thread's first
// message would end every run of messages.
func (n *Network) Handle(ctx context.Context, evs []events.Event) error {
	var msgs []events.Event
	var others [][]events.Event
	at := map[string]int{}
	for _, ev := range evs {
		if ev.Type == events.MessageCreated {
			msgs = append(msgs, ev)
			continue
		}
		i, ok := at[ev.ObjectID]
		if !ok {
			i = len(others)
			at[ev.ObjectID] = i
			others = append(others, nil)
		}
		others[i] = append(others[i], ev)
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
	return n.messages(ctx, msgs)
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

// messages counts messages in their recipients' analytics and, for a public recipient, in public
// activity and the network's message count.
func (n *Network) messages(ctx context.Context, evs []events.Event) error {
	if len(evs) == 0 {
		return nil
	}
	ids := make([]string, len(evs))
	for i, ev := range evs {
		ids[i] = ev.ObjectID
	}
	private, err := n.private(ctx, ids)
	if err != nil {
		return fmt.Errorf("project %d messages: %w", len(evs), err)
	}
	ts := make([]store.Tally, len(evs))
	for i, ev := range evs {
		ts[i] = n.tally(ev, eventTime(ev), store.CountMessages, private[ev.ObjectID], store.CounterMessages)
	}
	if err := n.Store.Tally(ctx, ts); err != nil {
		return fmt.Errorf("project %d messages: %w", len(evs), err)
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
	if len(ask) == 0 {
		return out, nil
	}
	found, err := n.Store.ObjectsOf(ctx, ask)
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

func eventTime(ev events.Event) time.Time {
	at, err := time.Parse(time.RFC3339Nano, ev.Time)
	if err != nil {
		return clock.Now()
	}
	return at
}

// changed retires a feed's validators; the network's feed's is retired as soon as its rows are
// appended, before the event's activity, so that a reader who sees the activity also sees a new
// validator.
func (n *Network) changed(ctx context.Context, feed string) {
	if n.Tags != nil {
		n.Tags.Changed(ctx, feed)
	}
}

// project projects one event other than a message (Handle counts those together).
func (n *Network) project(ctx context.Context, ev events.Event) error {
	at := eventTime(ev)
	switch ev.Type {
	case events.ObjectCreated:
		var d contract.ObjectCreatedData
		if ev.Decode(&d) != nil {
			return nil // a malformed event can never be projected; retrying would not help
		}
		return n.created(ctx, ev, d, at)
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
	case events.FeedItemPublished:
		var d contract.FeedItemPublishedData
		if ev.Decode(&d) != nil {
			return nil
		}
		return n.item(ctx, ev, d, at)
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
	verifiedAt, err := time.Parse(time.RFC3339Nano, d.VerifiedAt)
	if err != nil {
		verifiedAt = at
	}
	c := store.Claim{ID: d.ClaimID, ProofType: d.ProofType, Target: d.ClaimedTarget, VerifiedAt: verifiedAt}
	if err := n.Store.SetClaim(ctx, ev.ObjectID, c, verified); err != nil {
		return err
	}
	if verified {
		return n.activity(ctx, ev, at, store.CountVerifiedClaims, store.CounterClaims)
	}
	return n.lapsed(ctx, ev)
}

// object returns the object an event is about; ErrUnknownObject until its creation is projected.
func (n *Network) object(ctx context.Context, id string) (*store.Object, error) {
	o, err := n.Store.Object(ctx, id)
	if errors.Is(err, mongox.ErrNotFound) {
		return nil, ErrUnknownObject
	}
	return o, err
}

// created stores, for a public object, its rows of the network's feed, then the object. The rows
// come first, so that the box's items, which wait for the object, never race its creation row
// for the box's newest row.
func (n *Network) created(ctx context.Context, ev events.Event, d contract.ObjectCreatedData, at time.Time) error {
	o := store.Object{ID: ev.ObjectID, Hash: d.Hash, Visibility: d.Visibility, Title: d.Title, CreatedAt: at, HashAt: at}
	if !o.Private() {
		row := store.Row{Kind: store.KindNewSvc, EventID: ev.ID, BoxID: ev.ObjectID, Title: d.Title, At: at}
		added, err := n.Store.AddRow(ctx, row, store.FeedAll, store.FeedCreated)
		if err != nil {
			return err
		}
		if err := n.counts(ctx, added, store.CounterFeed, store.CounterCreated); err != nil {
			return err
		}
		if err := n.Store.SetNewest(ctx, store.FeedAll, row); err != nil {
			return err
		}
	}
	if err := n.Store.AddObject(ctx, o); err != nil {
		return err
	}
	if o.Private() {
		return nil
	}
	n.changed(ctx, contract.NetworkFeed)
	return n.Store.AddActivity(ctx, ev.ID, store.Activity{Type: ev.Type, BoxID: ev.ObjectID, At: at})
}

// counts adds one to each counter whose document this call added (one command for them all).
func (n *Network) counts(ctx context.Context, added []bool, counters ...string) error {
	return n.Store.AddEach(ctx, counters, added)
}

// contextUpdated records the object's profile title and counts the update. A decision-memory
// write is the owner's own work: it is counted for the owner's analytics but shows in no public
// activity, and changes no title.
func (n *Network) contextUpdated(ctx context.Context, ev events.Event, at time.Time) error {
	var d contract.ContextUpdatedData
	if ev.Decode(&d) != nil {
		return nil
	}
	if d.Change == "decision_memory" {
		return n.count(ctx, ev, at, store.CountContextUpdates)
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
	o, err := n.object(ctx, ev.ObjectID)
	if err != nil || o.Private() {
		return err
	}
	return n.Store.CountOnce(ctx, store.CounterClaims, ev.ID, -1)
}

// count counts an event in its object's analytics for the event's UTC day.
func (n *Network) count(ctx context.Context, ev events.Event, at time.Time, kind string) error {
	return n.Store.Tally(ctx, []store.Tally{{EventID: ev.ID, ObjectID: ev.ObjectID, At: at, Kind: kind}})
}

// item projects a published item: into its box's list (again: this repairs a crash between
// publishing's two writes), for a public box and a public author into the network's feed, then
// into the box's analytics and activity.
func (n *Network) item(ctx context.Context, ev events.Event, d contract.FeedItemPublishedData, at time.Time) error {
	box, err := n.object(ctx, ev.ObjectID)
	if err != nil {
		return err
	}
	posted, err := time.Parse(time.RFC3339Nano, d.PostedAt)
	if err != nil {
		posted = at
	}
	it := store.Item{ID: d.ItemID, FeedID: ev.ObjectID, Title: d.Title, Body: d.Body, Tags: d.Tags, PostedAt: posted,
		AuthorPrivate: d.AuthorHash == nil || d.AuthorObjectID == ""}
	if !it.AuthorPrivate {
		it.AuthorID, it.AuthorHash, it.AuthorName = d.AuthorObjectID, *d.AuthorHash, d.AuthorName
	}
	added, err := n.Store.ListItem(ctx, it)
	if err != nil {
		return err
	}
	if added {
		n.changed(ctx, contract.BoxFeed(ev.ObjectID))
	}
	if !box.Private() && !it.AuthorPrivate {
		if err := n.networkRows(ctx, ev, it); err != nil {
			return err
		}
	}
	return n.activity(ctx, ev, at, store.CountFeedItems)
}

// networkRows adds an item's rows to the network's feed, makes them their box's newest, and
// takes them out again when the item was hidden meanwhile (a hide that ran before the rows were
// added found nothing to take out; one that runs after this check takes them out itself).
func (n *Network) networkRows(ctx context.Context, ev events.Event, it store.Item) error {
	row := store.Row{Kind: store.KindItem, EventID: ev.ID, BoxID: ev.ObjectID, ItemID: it.ID, Title: it.Title,
		Body: it.Body, Tags: it.Tags, AuthorID: it.AuthorID, AuthorName: it.AuthorName, At: it.PostedAt}
	added, err := n.Store.AddRow(ctx, row, store.FeedAll, store.FeedItems)
	if err != nil {
		return err
	}
	if err := n.counts(ctx, added, store.CounterFeed, store.CounterItems); err != nil {
		return err
	}
	for _, feed := range []string{store.FeedAll, store.FeedItems} {
		if err := n.Store.SetNewest(ctx, feed, row); err != nil {
			return err
		}
	}
	if err := n.Store.CountOnce(ctx, store.CounterBoxesWithItems, ev.ObjectID, 1); err != nil {
		return err
	}
	hidden, err := n.Store.IsHidden(ctx, it.ID)
	if err != nil {
		return err
	}
	if hidden {
		if err := n.Store.UnlistItem(ctx, row); err != nil {
			return err
		}
	}
	n.changed(ctx, contract.NetworkFeed)
	return nil
}
