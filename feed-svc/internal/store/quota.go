package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// Quota lanes of a feed: the box's owner publishing to its own feed never competes with others.
const (
	LaneOwner  = "owner"
	LaneOthers = "others"
)

// Quota names the publishing places of a feed's lane on one UTC day.
type Quota struct {
	BoxID, Lane string
	Day         time.Time
}

// QuotaOf is the quota of a box's lane on the UTC day of t.
func QuotaOf(boxID, lane string, t time.Time) Quota {
	return Quota{BoxID: boxID, Lane: lane, Day: t.UTC().Truncate(24 * time.Hour)}
}

// scope is the quota's range: <box>|<lane>|<day>|, each place <scope><n>.
func (q Quota) scope() []string {
	return []string{mongox.IDPart(q.BoxID), q.Lane, q.Day.Format("20060102")}
}

// place is one taken publishing place.
type place struct {
	Key string    `bson:"_id"`
	At  time.Time `bson:"at"`
}

// TakeSlot takes a publishing place of q, one of limit, and reports whether it got one. The
// places are inserts of the numbers 1 to limit, so concurrent publishers never pass the cap: one
// find of the places taken (bounded by limit), then an insert at the first free one (the next
// when another publisher took it meanwhile). A full quota is refused without a write.
func (s *Store) TakeSlot(ctx context.Context, q Quota, limit int) (bool, error) {
	if limit < 1 {
		return false, nil
	}
	taken, err := mongox.Find[place](ctx, s.c(Quotas), mongox.Range{Scope: mongox.Scope(q.scope()...), Limit: limit})
	if err != nil {
		return false, fmt.Errorf("store quota: %w", err)
	}
	for n := len(taken) + 1; n <= limit; n++ {
		err := mongox.Insert(ctx, s.c(Quotas), place{Key: mongox.Key(append(q.scope(), mongox.Seq(int64(n)))...), At: time.Now()})
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, mongox.ErrTaken) {
			return false, fmt.Errorf("store quota: %w", err)
		}
	}
	return false, nil
}

// SweepQuotas deletes the places of days before day: a quota counts one day.
func (s *Store) SweepQuotas(ctx context.Context, day time.Time) error {
	// Bounded by the places of the days kept (each box and lane at most its cap a day), filtered on
	// the time of each place: the collection holds about a day of publishing.
	_, err := s.c(Quotas).DeleteMany(ctx, bson.D{{Key: "at", Value: bson.D{{Key: "$lt", Value: day}}}})
	if err != nil {
		return fmt.Errorf("sweep quotas: %w", err)
	}
	return nil
}

// UpgradeQuotas carries today's publishing counts of an earlier release (mongox.Log lists
// "quota:<box>:<lane>:<day>" in the lists collection) over to places, once, so that no lane
// gets its cap twice on the day of the upgrade: one read of the quota lists' heads and entries
// of today (a range of the lists collection's ids), a place per entry. Earlier days are over.
func (s *Store) UpgradeQuotas(ctx context.Context, now time.Time) (int, error) {
	day := now.UTC().Format(time.DateOnly)
	cur, err := s.c(Lists).Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: "quota:"}, {Key: "$lt", Value: "quota;"}}}},
		options.Find().SetBatchSize(500).SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return 0, fmt.Errorf("read earlier quotas: %w", err)
	}
	defer cur.Close(ctx)
	n := 0
	for cur.Next(ctx) {
		id, _ := cur.Current.Lookup("_id").StringValueOK()
		list, pos, ok := strings.Cut(id, "#")
		seq, perr := strconv.ParseInt(pos, 10, 64)
		parts := strings.Split(strings.TrimPrefix(list, "quota:"), ":")
		if !ok || perr != nil || seq < 1 || len(parts) != 3 || parts[2] != day {
			continue // a head, a marker, or another day
		}
		q := QuotaOf(parts[0], parts[1], now)
		if err := mongox.InsertOnce(ctx, s.c(Quotas), place{Key: mongox.Key(append(q.scope(), mongox.Seq(seq))...), At: now}); err != nil {
			return n, fmt.Errorf("carry a quota place over: %w", err)
		}
		n++
	}
	return n, cur.Err()
}
