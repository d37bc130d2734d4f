package webhook

import (
	"context"
	"fmt"
	"slices"

	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// FanoutStore is what the fan-out writes: the deliveries and their schedule, and the projection of
// objects' visibility.
type FanoutStore interface {
	InsertScheduled(ctx context.Context, ds []*store.Delivery) ([]bool, error)
	PutVisibility(ctx context.Context, objectID, visibility string) error
	Visibility(ctx context.Context, objectID string) (string, error)
}

// ObjectReader reads an object's visibility from identity-svc: only for an object the
// projection has not recorded (created before webhook-svc kept it), once.
type ObjectReader interface {
	Object(ctx context.Context, objectID string) (*contract.Object, error)
}

// Fanout turns a domain event into one delivery per matching subscription and makes each first
// attempt at once. Events of one object arrive in order on one partition, and are attempted in
// that order, so a healthy endpoint receives a subscription's events in order.
type Fanout struct {
	Store       FanoutStore
	Subscribers Subscribers
	Sender      *Sender
	Objects     ObjectReader
}

// Handle is the consumer of the domain topics, an events.BatchHandler: the deliveries of a
// batch of events are scheduled in one command and inserted in another. It is idempotent: a
// delivery's id is derived from the event and the subscription, and an existing delivery is left
// to the sender's schedule.
func (f *Fanout) Handle(ctx context.Context, evs []events.Event) error {
	// Once events are taken, their deliveries are recorded even if the replica is stopping: only
	// the attempts stop with it, and the sender of another replica makes them.
	rec := context.WithoutCancel(ctx)
	now := clock.Now()
	// A first attempt not made within a lease (its replica stopped) is the poll's to make; a
	// delivery that finds no place on its lane is the poll's at once.
	leased := now.Add(f.Sender.Lease)
	var pending []match
	var deliveries []*store.Delivery
	for _, ev := range evs {
		if err := f.project(rec, ev); err != nil {
			f.release(pending)
			return err
		}
		name, body, err := NewPayload(ev)
		if err != nil {
			f.release(pending)
			return events.Permanent(err) // malformed data stays malformed
		}
		if name == "" {
			continue
		}
		subs, err := f.matching(rec, name, ev.ObjectID)
		if err != nil {
			f.release(pending)
			return err
		}
		for _, m := range subs {
			next := now
			if m.queued = f.Sender.Reserve(m.sub.ID); m.queued {
				next = leased
			}
			m.delivery = &store.Delivery{
				ID: ev.ID + "." + m.sub.ID, SubscriptionID: m.sub.ID, EventID: ev.ID, Event: name, Body: string(body),
				CreatedAt: now, Status: store.StatusPending, NextAttemptAt: &next, Attempts: []store.Attempt{},
			}
			deliveries = append(deliveries, m.delivery)
			pending = append(pending, m)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	// The schedule first, so that no delivery is ever pending without its entry. A replica
	// stopping before the deliveries are in leaves entries without one: the events are consumed
	// again (their offsets were not committed), and the sender deletes an entry whose delivery
	// does not exist once it is due.
	inserted, err := f.Store.InsertScheduled(rec, deliveries)
	for i, m := range pending {
		switch { // every reserved place is queued or given back
		case !m.queued:
		case err == nil && inserted[i]:
			f.Sender.Queue(ctx, &m.sub, m.delivery)
		default:
			f.Sender.Release(m.sub.ID)
		}
	}
	return err
}

// release gives back the lane places of deliveries that will not be queued.
func (f *Fanout) release(pending []match) {
	for _, m := range pending {
		if m.queued {
			f.Sender.Release(m.sub.ID)
		}
	}
}

// match is a subscription that takes an event, and the delivery made for it.
type match struct {
	sub      store.Subscription
	delivery *store.Delivery
	queued   bool // a place on the subscription's lane is reserved
}

// matching reads the subscriptions to an object's events and keeps the enabled ones that selected
// the event. A context subscription of another object to a box that is now private receives
// nothing.
func (f *Fanout) matching(ctx context.Context, name, objectID string) ([]match, error) {
	subs, err := f.Subscribers.SubscriptionsTo(ctx, objectID)
	if err != nil {
		return nil, err
	}
	var out []match
	var visibility *contract.Visibility
	for _, s := range subs {
		sub := s.Sub
		if !slices.Contains(sub.Events, name) {
			continue
		}
		if store.Disabled(&sub, &s.Health) {
			continue
		}
		if sub.CreatorID != objectID {
			if visibility == nil {
				v, err := f.visibility(ctx, objectID)
				if err != nil {
					return nil, err
				}
				visibility = &v
			}
			if !contract.Visible(*visibility, objectID, sub.CreatorID) {
				continue
			}
		}
		out = append(out, match{sub: sub})
	}
	return out, nil
}

// project keeps the visibility of each object identity-svc creates (it never changes after).
func (f *Fanout) project(ctx context.Context, ev events.Event) error {
	if ev.Type != events.ObjectCreated {
		return nil
	}
	var d contract.ObjectCreatedData
	if err := ev.Decode(&d); err != nil {
		return events.Permanent(fmt.Errorf("malformed %s event: %w", ev.Type, err)) // retrying cannot help
	}
	if d.Visibility == "" {
		return nil // left to the read-through below
	}
	return f.Store.PutVisibility(ctx, ev.ObjectID, string(d.Visibility))
}

// visibility answers from the projection; an object it has not recorded (created before the
// projection, with no context subscription made since) is read from identity-svc once and kept.
func (f *Fanout) visibility(ctx context.Context, objectID string) (contract.Visibility, error) {
	v, err := f.Store.Visibility(ctx, objectID)
	if err != nil || v != "" {
		return contract.Visibility(v), err
	}
	if f.Objects == nil {
		return "", fmt.Errorf("object %s: visibility unknown", objectID)
	}
	obj, err := f.Objects.Object(ctx, objectID)
	if err != nil {
		return "", err
	}
	return obj.Visibility, f.Store.PutVisibility(ctx, objectID, string(obj.Visibility))
}
