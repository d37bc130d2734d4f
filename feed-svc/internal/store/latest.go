package store

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
)

// latest marks, for one list of the network's feed and one box, the position of the box's newest
// row there: unique=1 pages show a row only when it is its box's newest (one point read per row).
type latest struct {
	ID  string `bson:"_id"`
	Seq int64  `bson:"seq"`
}

func latestID(list, boxID string) string { return list + "|" + boxID }

// SetLatest records that the box's row at seq is its newest in list, unless a newer one is
// recorded already.
func (s *Store) SetLatest(ctx context.Context, list, boxID string, seq int64) error {
	id := latestID(list, boxID)
	if s.load != nil {
		s.load.latest[id] = max(s.load.latest[id], seq)
		return nil
	}
	res, err := s.c(Latest).UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "seq", Value: bson.D{{Key: "$lt", Value: seq}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "seq", Value: seq}}}})
	if err != nil {
		return fmt.Errorf("store latest rows: %w", err)
	}
	if res.MatchedCount > 0 {
		return nil
	}
	// None older: either none at all (insert) or a newer one (the insert is refused, as it should).
	if err := mongox.InsertOnce(ctx, s.c(Latest), latest{ID: id, Seq: seq}); err != nil {
		return fmt.Errorf("store latest rows: %w", err)
	}
	return nil
}

// IsLatest reports whether the box's row at seq is its newest in list.
func (s *Store) IsLatest(ctx context.Context, list, boxID string, seq int64) (bool, error) {
	var l latest
	err := mongox.FindOne(ctx, s.c(Latest), mongox.ByID(latestID(list, boxID)), &l)
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("store latest rows: %w", err)
	}
	return l.Seq == seq, nil
}
