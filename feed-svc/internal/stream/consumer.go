package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/svcdev/svc/feed-svc/internal/network"
	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// Topics are the topics the streams follow: every topic that carries a public event.
var Topics = []string{events.TopicIdentity, events.TopicContext, events.TopicMailbox, events.TopicGraph,
	events.TopicClaims, events.TopicFeed}

// FeedList is the log of the network feed's rows.
const FeedList = "feed"

// ObjectList is the log of an object's public events.
func ObjectList(objectID string) string { return "obj:" + objectID }

// Objects reads the network projection's objects by id.
type Objects interface {
	Object(ctx context.Context, id string) (*store.Object, error)
}

// Appender appends the events of the pipeline to the logs: each event with a public name to its
// object's log, as the payload a webhook delivery of it carries (events.Public), and each event
// that makes a row of the network feed to the feed's log, as that row. Appends are once per event
// id, so a redelivered batch appends nothing new.
type Appender struct {
	Log     *Log
	Objects Objects
}

// Handle appends a batch of events (an events.BatchHandler) in one Redis round trip.
func (a *Appender) Handle(ctx context.Context, evs []events.Event) error {
	var out []Pending
	for _, ev := range evs {
		p, ok, err := events.Public(ev)
		if err != nil {
			return events.Permanent(err)
		}
		if ok {
			data, err := json.Marshal(p)
			if err != nil {
				return events.Permanent(fmt.Errorf("encode %s payload: %w", ev.Type, err))
			}
			out = append(out, Pending{List: ObjectList(ev.ObjectID), Entry: Entry{EventID: ev.ID, Event: p.Type, Data: data}})
		}
		row, ok, err := a.feedRow(ctx, ev)
		if err != nil {
			return err
		}
		if ok {
			data, err := json.Marshal(row)
			if err != nil {
				return events.Permanent(fmt.Errorf("encode feed row: %w", err))
			}
			out = append(out, Pending{List: FeedList, Entry: Entry{EventID: ev.ID, Event: row.Kind, Data: data}})
		}
	}
	return a.Log.Append(ctx, out)
}

// feedRow is the row of the network feed an event makes, as GET /api/feed shows it when the
// event happens: public objects' creations and items published to public boxes by public
// authors. A row hidden later stays in the stream, which tells what happened.
func (a *Appender) feedRow(ctx context.Context, ev events.Event) (network.Row, bool, error) {
	at, err := time.Parse(time.RFC3339Nano, ev.Time)
	if err != nil {
		at = time.Now()
	}
	switch ev.Type {
	case events.ObjectCreated:
		var d contract.ObjectCreatedData
		if err := ev.Decode(&d); err != nil {
			return network.Row{}, false, events.Permanent(err)
		}
		o := &store.Object{ID: ev.ObjectID, Hash: d.Hash, Visibility: d.Visibility, Title: d.Title}
		row, ok := network.RowOf(store.Row{Kind: network.KindNewSvc, EventID: ev.ID, BoxID: ev.ObjectID, At: at}, o, o, "")
		return row, ok, nil
	case events.FeedItemPublished:
		var d contract.FeedItemPublishedData
		if err := ev.Decode(&d); err != nil {
			return network.Row{}, false, events.Permanent(err)
		}
		if d.AuthorObjectID == "" || d.AuthorHash == nil {
			// A private author is named by nothing, and makes no row (network.RowOf).
			return network.Row{}, false, nil
		}
		// The box and the author were created before the item, so the projection knows them
		// (or soon will: its consumer group may lag this one, and a retry waits for it).
		box, err := a.Objects.Object(ctx, ev.ObjectID)
		if err != nil {
			return network.Row{}, false, fmt.Errorf("feed row: box: %w", err)
		}
		author, err := a.Objects.Object(ctx, d.AuthorObjectID)
		if err != nil {
			return network.Row{}, false, fmt.Errorf("feed row: author: %w", err)
		}
		box.Hash, author.Hash = ev.Hash, *d.AuthorHash
		row, ok := network.RowOf(store.Row{Kind: network.KindItem, EventID: ev.ID, BoxID: ev.ObjectID, ItemID: d.ItemID,
			Title: d.Title, Tags: d.Tags, AuthorID: d.AuthorObjectID, AuthorName: d.AuthorName, At: at}, box, author, d.Body)
		return row, ok, nil
	}
	return network.Row{}, false, nil
}
