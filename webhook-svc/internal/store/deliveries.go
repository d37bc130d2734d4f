package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/mongox"
)

// Delivery states.
const (
	StatusPending   = "pending"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// Delivery is one event on its way to one subscription, with every attempt made so far. Its
// _id is derived from the event and the subscription, so a redelivered event inserts nothing.
type Delivery struct {
	ID             string `bson:"_id"`
	SubscriptionID string `bson:"subscription_id"`
	EventID        string `bson:"event_id"`
	Event          string `bson:"event"`
	// Body is the exact JSON payload signed and sent.
	Body      string    `bson:"body"`
	CreatedAt time.Time `bson:"created_at"`
	Status    string    `bson:"status"`
	// NextAttemptAt is when the next attempt is due; nil once the delivery is final. A pending
	// delivery always has one, and a schedule entry (DueEntry) no later than it, so that a replica
	// that dies mid-attempt leaves it to the others.
	NextAttemptAt *time.Time `bson:"next_attempt_at,omitempty"`
	Attempts      []Attempt  `bson:"attempts"`
	ReplayOf      string     `bson:"replay_of,omitempty"`
	// Events are the ids of the events this write staged in the outbox (events.EventsField).
	Events []string `bson:"_events,omitempty"`
}

// Attempt is one POST to the callback.
type Attempt struct {
	At         time.Time `bson:"at"`
	StatusCode int       `bson:"status_code,omitempty"`
	Error      string    `bson:"error,omitempty"`
	DurationMS int64     `bson:"duration_ms"`
}

// InsertDeliveries stores new deliveries in one command and reports which got in: one that
// already exists is left as it is.
func (s *Store) InsertDeliveries(ctx context.Context, ds []*Delivery) ([]bool, error) {
	inserted, err := mongox.InsertNew(ctx, s.c(Deliveries), ds)
	if err != nil {
		return nil, fmt.Errorf("store deliveries: %w", err)
	}
	return inserted, nil
}

// Delivery returns one delivery, or mongox.ErrNotFound.
func (s *Store) Delivery(ctx context.Context, id string) (*Delivery, error) {
	var d Delivery
	if err := mongox.FindOne(ctx, s.c(Deliveries), mongox.ByID(id), &d); err != nil {
		return nil, fmt.Errorf("read delivery: %w", err)
	}
	return &d, nil
}

// DeliveriesByID reads the deliveries with the given ids that exist, in one find.
func (s *Store) DeliveriesByID(ctx context.Context, ids []string) (map[string]*Delivery, error) {
	found, err := mongox.FindIn[Delivery](ctx, s.c(Deliveries), ids)
	if err != nil {
		return nil, fmt.Errorf("read deliveries: %w", err)
	}
	out := make(map[string]*Delivery, len(found))
	for i := range found {
		out[found[i].ID] = &found[i]
	}
	return out, nil
}

// ReplaceDeliveries rewrites deliveries; only the holder of each one's attempt calls it. They
// are one bulk write of a replace by _id each, so that a page's or a batch's outcomes cost one
// command. (The embedded FerretDB once kept each statement of such a command holding a pooled
// connection until the command ended, which stalled two replicas' bulk writes at once:
// TestPollersOfTwoReplicasDeliverEachOnce, and TestUpdateCommandOfManyStatements in pkg/embedded.)
func (s *Store) ReplaceDeliveries(ctx context.Context, ds ...*Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	models := make([]mongo.WriteModel, len(ds))
	for i, d := range ds {
		models[i] = mongo.NewReplaceOneModel().SetFilter(mongox.ByID(d.ID)).SetReplacement(d).SetUpsert(true)
	}
	if err := mongox.BulkUpsert(ctx, s.c(Deliveries), models); err != nil {
		return fmt.Errorf("store %s: %w", Deliveries, err)
	}
	return nil
}
