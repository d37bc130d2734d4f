package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// DeadLetterCollection holds the events a service's consumers gave up on.
const DeadLetterCollection = "dead_events"

// DeadLetter is an event a consumer could not handle: malformed, refused with a permanent error,
// or still failing after its retry period. Its offset was committed, so only a replay handles it.
type DeadLetter struct {
	ID            string    `bson:"_id" json:"id"`
	Group         string    `bson:"group" json:"group"`
	EventID       string    `bson:"event_id,omitempty" json:"event_id,omitempty"`
	Type          string    `bson:"type,omitempty" json:"type,omitempty"`
	Topic         string    `bson:"topic" json:"topic"`
	Partition     int       `bson:"partition" json:"partition"`
	Offset        int64     `bson:"offset" json:"offset"`
	Payload       string    `bson:"payload" json:"payload"`
	Error         string    `bson:"error" json:"error"`
	Attempts      int       `bson:"attempts" json:"attempts"`
	FirstFailedAt time.Time `bson:"first_failed_at" json:"first_failed_at"`
	ParkedAt      time.Time `bson:"parked_at" json:"parked_at"`
}

// ErrUnknownDeadLetter says that no dead letter has the id.
var ErrUnknownDeadLetter = errors.New("no such dead letter")

// DeadLetters lists, replays and drops a service's dead letters.
type DeadLetters struct {
	coll      *mongo.Collection
	processed *mongo.Collection
	handlers  map[string]Handler
	dedupeFor time.Duration
}

// NewDeadLetters returns the dead letters of db; handlers are the service's handlers by group.
func NewDeadLetters(db *mongo.Database, processed *mongo.Collection, handlers map[string]Handler) *DeadLetters {
	return &DeadLetters{coll: db.Collection(DeadLetterCollection), processed: processed, handlers: handlers, dedupeFor: 7 * 24 * time.Hour}
}

// List returns up to limit dead letters, oldest first.
func (d *DeadLetters) List(ctx context.Context, limit int) ([]DeadLetter, error) {
	return mongox.FindAll[DeadLetter](ctx, d.coll, bson.D{}, options.Find().SetSort(bson.D{{Key: "parked_at", Value: 1}}).SetLimit(int64(limit)))
}

// Replay hands a dead letter to its group's handler once more. When the handler succeeds the
// event is recorded as processed and the dead letter deleted; otherwise it stays, with the new
// error, and the error is returned.
func (d *DeadLetters) Replay(ctx context.Context, id string) error {
	var dl DeadLetter
	err := d.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&dl)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return ErrUnknownDeadLetter
	}
	if err != nil {
		return fmt.Errorf("dead letters: %w", err)
	}
	h := d.handlers[dl.Group]
	if h == nil {
		return fmt.Errorf("no consumer group %q in this service", dl.Group)
	}
	var ev Event
	if err := json.Unmarshal([]byte(dl.Payload), &ev); err != nil || ev.ID == "" {
		return Permanent(errors.New("malformed event: not a JSON envelope with an id"))
	}
	if err := h(ctx, ev); err != nil {
		_, _ = d.coll.UpdateOne(context.WithoutCancel(ctx), bson.D{{Key: "_id", Value: id}}, bson.D{
			{Key: "$set", Value: bson.D{{Key: "error", Value: err.Error()}}}, {Key: "$inc", Value: bson.D{{Key: "attempts", Value: 1}}},
		})
		return fmt.Errorf("replay %s: %w", id, err)
	}
	// A failed dedupe record only costs a repeated handling, should Kafka deliver the event again.
	_ = markProcessed(ctx, d.processed, dl.Group+":"+ev.ID, ev.Type, d.dedupeFor)
	return d.Delete(ctx, id)
}

// Delete drops a dead letter without handling it.
func (d *DeadLetters) Delete(ctx context.Context, id string) error {
	res, err := d.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
	if err != nil {
		return fmt.Errorf("dead letters: %w", err)
	}
	if res.DeletedCount == 0 {
		return ErrUnknownDeadLetter
	}
	return nil
}
