// Package consumers holds what feed-svc consumes: the domain events of every service, projected
// into the network's feed, activity, stats and analytics.
package consumers

import (
	"context"
	"fmt"
	"time"

	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// Topics are the topics the network projection reads.
var Topics = []string{events.TopicIdentity, events.TopicContext, events.TopicMailbox, events.TopicClaims, events.TopicFeed}

// Projected are the event types the projection keeps; every other event is skipped.
var Projected = []string{
	events.ObjectCreated, events.ObjectHashChanged, events.ContextUpdated,
	events.MessageCreated, events.ClaimVerified, events.ClaimLapsed, events.FeedItemPublished,
}

// Network projects events. Every write is an insert keyed by the event (or the hash), so a
// redelivered event changes nothing.
type Network struct{ Store *store.Store }

// Handle projects a batch of events (an events.BatchHandler): the rows of the feed, activity,
// stats and analytics in one insert, after the objects and hashes the events name.
func (n *Network) Handle(ctx context.Context, evs []events.Event) error {
	rows := make([]store.Event, 0, len(evs))
	for _, ev := range evs {
		row, ok, err := n.project(ctx, ev)
		if err != nil {
			return err
		}
		if ok {
			rows = append(rows, row)
		}
	}
	if err := n.Store.AddEvents(ctx, rows); err != nil {
		return fmt.Errorf("project events: %w", err)
	}
	return nil
}

// project stores what one event says of objects and hashes and returns its row; ok is false for
// an event the projection skips.
func (n *Network) project(ctx context.Context, ev events.Event) (row store.Event, ok bool, err error) {
	at, err := time.Parse(time.RFC3339Nano, ev.Time)
	if err != nil {
		at = clock.Now()
	}
	row = store.Event{ID: ev.ID, Type: ev.Type, ObjectID: ev.ObjectID, At: at}
	switch ev.Type {
	case events.ObjectCreated:
		var d contract.ObjectCreatedData
		if err := ev.Decode(&d); err != nil {
			return row, false, nil // a malformed event can never be projected; retrying would not help
		}
		if err := n.Store.AddObject(ctx, store.Object{ID: ev.ObjectID, Hash: d.Hash, Visibility: d.Visibility,
			Title: d.Title, CreatedAt: at}); err != nil {
			return row, false, err
		}
		if err := n.Store.AddHash(ctx, store.HashName{Hash: d.Hash, ObjectID: ev.ObjectID, At: at}); err != nil {
			return row, false, err
		}
		row.Title = d.Title
	case events.ObjectHashChanged:
		var d contract.HashChangedData
		if err := ev.Decode(&d); err != nil {
			return row, false, nil
		}
		if err := n.Store.AddHash(ctx, store.HashName{Hash: d.Hash, ObjectID: ev.ObjectID, At: at}); err != nil {
			return row, false, err
		}
	case events.FeedItemPublished:
		var d contract.FeedItemPublishedData
		if err := ev.Decode(&d); err != nil {
			return row, false, nil
		}
		row.ItemID, row.Title, row.Body, row.Tags = d.ItemID, d.Title, d.Body, d.Tags
		row.AuthorID, row.AuthorHash, row.AuthorName = d.AuthorObjectID, d.AuthorHash, d.AuthorName
	case events.ContextUpdated, events.MessageCreated, events.ClaimVerified, events.ClaimLapsed:
	default:
		return row, false, nil
	}
	return row, true, nil
}
