package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// Counts keeps the network's counters and each object's analytics (collection Counts). FerretDB's
// updates are read-then-rewrite without isolation, so a count that several consumers write is
// never an updated number:
//
//	c|<counter>|<seq>        a network counter: each change inserts the next seq with the new sum
//	                         (an insert, or an upsert that only inserts), so a change claims its
//	                         place, and the count is the newest document's sum (one find of the
//	                         counter's range, newest first)
//	m|<counter>|<key>        that key was counted (an event, an item), inserted before its change
//	an|<object>|<day>|<kind> an object's analytics of one UTC day: a number updated only by the
//	                         consumer of the object's partition of the kind's topic, guarded by
//	                         the events' marks
//
// A crash between a mark and its change loses that one count; the redelivered event finds its
// mark and counts nothing twice. An event that shows as public activity needs no mark of its own:
// its activity entry, keyed by the event, is inserted first and counts as its mark (Tally).

// Network counters.
const (
	// CounterFeed counts the rows the network's feed shows (creations and items, less hidden items).
	CounterFeed = "feed"
	// CounterItems counts the items the network's feed shows, less hidden ones.
	CounterItems = "items"
	// CounterCreated counts public objects (their creation rows).
	CounterCreated = "created"
	// CounterBoxesWithItems counts the public boxes with at least one item in the network's feed.
	CounterBoxesWithItems = "boxes_item"
	// CounterMessages counts the messages to public objects.
	CounterMessages = "messages"
	// CounterClaims counts public objects' verified claims, less those that lapsed.
	CounterClaims = "claims"
	// counterHidden marks the hidden items counted out of CounterFeed and CounterItems.
	counterHidden = "hidden"
)

// Analytics kinds, each counted per object and UTC day.
const (
	CountMessages       = "messages"
	CountFeedItems      = "feed_items"
	CountContextUpdates = "context_updates"
	CountVerifiedClaims = "verified_claims"
)

// sum is one change of a network counter: the count after it.
type sum struct {
	ID  string `bson:"_id"`
	Sum int64  `bson:"sum"`
}

// daily is one object's count of one kind on one UTC day.
type daily struct {
	ID string `bson:"_id"`
	N  int64  `bson:"n"`
}

// markID is the mark of key in counter (a key of its own parts, such as a dailyID).
func markID(counter, key string) string {
	return mongox.Scope("m") + counter + mongox.Sep + mongox.IDPart(key)
}
func counterScope(counter string) string { return mongox.Scope("c", counter) }
func dayPart(day time.Time) string       { return day.UTC().Format("20060102") }
func dailyID(objectID string, day time.Time, kind string) string {
	return mongox.Key("an", mongox.IDPart(objectID), dayPart(day), kind)
}

// addTurn changes counter by delta for the writer whose turn it is (w locked): it inserts the
// change after the newest this store wrote or read, without reading it again. A change is only
// ever inserted at the place after the newest, so a stale one (another replica went on
// meanwhile) makes the insert collide, and only then is the newest read. The store's own writers
// of a counter take turns, so that they never collide with each other.
func (s *Store) addTurn(ctx context.Context, counter string, w *counterWriter, delta int64) error {
	for {
		next, err := s.nextSum(ctx, counter, w, delta)
		if err != nil {
			return err
		}
		err = mongox.Insert(ctx, s.c(Counts), next)
		if err == nil {
			w.newest = next
			return nil
		}
		w.known = false // taken by another replica, or unknown: read the newest
		if !errors.Is(err, mongox.ErrTaken) {
			return fmt.Errorf("store counter %s: %w", counter, err)
		}
	}
}

// nextSum is the change of counter by delta after the newest w knows, read when it knows none.
func (s *Store) nextSum(ctx context.Context, counter string, w *counterWriter, delta int64) (sum, error) {
	if !w.known {
		last, err := s.lastSum(ctx, counter)
		if err != nil {
			return sum{}, err
		}
		w.newest, w.known = last, true
	}
	seq := int64(0)
	if w.newest.ID != "" {
		var err error
		if seq, err = mongox.ParseSeq(w.newest.ID[len(counterScope(counter)):]); err != nil {
			w.known = false
			return sum{}, fmt.Errorf("store counter %s: %w", counter, err)
		}
	}
	return sum{ID: counterScope(counter) + mongox.Seq(seq+1), Sum: w.newest.Sum + delta}, nil
}

// newestSums are, by counter, the newest change a store wrote or read, and the turn of its writers.
type newestSums struct {
	mu sync.Mutex
	m  map[string]*counterWriter
}

// counterWriter is one counter's newest known change; its lock is the turn to write the next.
type counterWriter struct {
	mu     sync.Mutex
	newest sum
	known  bool
}

func (n *newestSums) of(counter string) *counterWriter {
	n.mu.Lock()
	defer n.mu.Unlock()
	w := n.m[counter]
	if w == nil {
		w = &counterWriter{}
		n.m[counter] = w
	}
	return w
}

func (s *Store) lastSum(ctx context.Context, counter string) (sum, error) {
	got, err := mongox.Find[sum](ctx, s.c(Counts), mongox.Range{Scope: counterScope(counter), Desc: true, Limit: 1})
	if err != nil {
		return sum{}, fmt.Errorf("store counter %s: %w", counter, err)
	}
	if len(got) == 0 {
		return sum{}, nil
	}
	return got[0], nil
}

// CountOnce marks each of keys in counter and adds delta for each that this call marked (one
// insert of the marks, one command of the counts).
func (s *Store) CountOnce(ctx context.Context, counter string, delta int64, keys ...string) error {
	marks := make([]countedMark, len(keys))
	for i, k := range keys {
		marks[i] = countedMark{id: markID(counter, k), counters: []string{counter}, delta: delta}
	}
	return s.countMarks(ctx, marks, nil)
}

// countedMark is a mark to insert with what it counts once it goes in: delta in each of
// counters, or one in the analytics document daily.
type countedMark struct {
	id       string
	counters []string
	delta    int64
	daily    string
}

// countMarks inserts marks, those that exist left as they are, and adds to deltas what the marks
// that went in now count, then counts them all (count). What went in is counted only here, so
// the count runs to its end whether or not the caller is still waiting.
func (s *Store) countMarks(ctx context.Context, marks []countedMark, deltas map[string]int64) error {
	daily := map[string]int64{}
	if deltas == nil {
		deltas = map[string]int64{}
	}
	docs := make([]bson.D, len(marks))
	for i, m := range marks {
		docs[i] = bson.D{{Key: "_id", Value: m.id}}
	}
	in, err := mongox.InsertNewInBatches(ctx, s.c(Counts), docs, batch)
	if err != nil {
		return fmt.Errorf("store counts: %w", err)
	}
	for i, ok := range in {
		switch m := marks[i]; {
		case !ok:
		case m.daily != "":
			daily[m.daily]++
		default:
			for _, c := range m.counters {
				deltas[c] += m.delta
			}
		}
	}
	return s.count(ctx, daily, deltas)
}

// Counter is a network counter's count (one find).
func (s *Store) Counter(ctx context.Context, counter string) (int64, error) {
	last, err := s.lastSum(ctx, counter)
	return last.Sum, err
}

// Tally is an event to count: in its object's analytics of Kind ("" counts none) for the UTC day
// of At, and, when it shows as public activity (Activity not nil), one in each of Counters.
type Tally struct {
	EventID  string
	ObjectID string
	At       time.Time
	Kind     string
	Activity *Activity
	Counters []string
}

// Tally counts events once each, in four commands whatever their number: one insert of the
// activity entries, one of the marks of the events that show in no activity, one bulk $inc of
// the objects' analytics (each analytics document belongs to its object's partition, whose one
// consumer counts it) and one insert per network counter changed. An activity entry, keyed by its
// event, is the event's mark: it goes in first, and what went in now is counted, whether or not
// the caller is still waiting. A crash between the inserts and the counts loses those counts, as
// between a mark and its change.
func (s *Store) Tally(ctx context.Context, ts []Tally) error {
	var acts, marks []any
	var actOf, markOf []int // the tally of each document
	for i, t := range ts {
		switch {
		case t.Activity != nil:
			acts = append(acts, keyed[Activity]{ID: activityKey(t.Activity, t.EventID), V: *t.Activity})
			actOf = append(actOf, i)
		case t.Kind != "":
			marks = append(marks, bson.D{{Key: "_id", Value: markID(dailyID(t.ObjectID, t.At, t.Kind), t.EventID)}})
			markOf = append(markOf, i)
		}
	}
	counted := make([]bool, len(ts))
	if err := s.insertMarks(ctx, Pages, acts, actOf, counted); err != nil {
		return err
	}
	if err := s.insertMarks(ctx, Counts, marks, markOf, counted); err != nil {
		return err
	}
	daily := map[string]int64{}
	deltas := map[string]int64{}
	for i, t := range ts {
		if !counted[i] {
			continue
		}
		if t.Kind != "" {
			daily[dailyID(t.ObjectID, t.At, t.Kind)]++
		}
		for _, c := range t.Counters {
			deltas[c]++
		}
	}
	return s.count(ctx, daily, deltas)
}

// countTimeout bounds the counts that follow their marks once the caller has gone.
const countTimeout = 30 * time.Second

// count adds to the analytics documents and the network counters in one command: an update of
// each analytics document ($inc) and an upsert of each counter's next sum after the newest this
// store knows ($setOnInsert). A counter whose place was taken (the upsert matched, or collided
// with a concurrent insert) is added to again from its newest, alone.
//
// It follows the marks of what it counts, and what went in is counted only here: a handler whose
// context ends in between (its consumer group's generation ended, say, when the broker went away)
// must still count it, or the redelivered events would find their marks and count nothing. So it
// runs without the caller's cancellation, bounded by countTimeout once the caller has gone.
func (s *Store) count(ctx context.Context, daily, deltas map[string]int64) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), countTimeout)
	defer cancel()
	var counters []string
	for _, c := range slices.Sorted(maps.Keys(deltas)) {
		if deltas[c] != 0 {
			counters = append(counters, c)
		}
	}
	writers := make([]*counterWriter, len(counters))
	for i, c := range counters { // in order, so that concurrent counts never wait on each other in a circle
		writers[i] = s.sums.of(c)
		writers[i].mu.Lock()
		defer writers[i].mu.Unlock()
	}
	models := dailyModels(daily)
	first := len(models)
	nexts := make([]sum, len(counters))
	for i, c := range counters {
		next, err := s.nextSum(ctx, c, writers[i], deltas[c])
		if err != nil {
			return err
		}
		nexts[i] = next
		models = append(models, mongo.NewUpdateOneModel().SetFilter(mongox.ByID(next.ID)).SetUpsert(true).
			SetUpdate(bson.D{{Key: "$setOnInsert", Value: bson.D{{Key: "sum", Value: next.Sum}}}}))
	}
	if len(models) == 0 {
		return nil
	}
	res, err := s.c(Counts).BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	taken := map[int]bool{}
	var again []mongo.WriteModel
	if err != nil {
		var bwe mongo.BulkWriteException
		if !errors.As(err, &bwe) || bwe.WriteConcernError != nil {
			return fmt.Errorf("store counts: %w", err)
		}
		for _, we := range bwe.WriteErrors {
			switch {
			case !mongox.IsDuplicateKey(we):
				return fmt.Errorf("store counts: %w", err)
			case we.Index < first:
				// Two upserts of a new analytics document at once (a partition changing hands):
				// the one that lost did nothing, and is an update now.
				again = append(again, models[we.Index])
			default:
				taken[we.Index] = true
			}
		}
	}
	if len(again) > 0 {
		if _, err := s.c(Counts).BulkWrite(ctx, again, options.BulkWrite().SetOrdered(false)); err != nil {
			return fmt.Errorf("store analytics: %w", err)
		}
	}
	// The counters' upserts are known by the ids upserted, not by their indexes: FerretDB numbers
	// the upserts of a command as if the statements that matched were not there.
	upserted := map[any]bool{}
	for _, id := range res.UpsertedIDs {
		upserted[id] = true
	}
	for i, c := range counters {
		if upserted[nexts[i].ID] && !taken[first+i] {
			writers[i].newest = nexts[i]
			continue
		}
		writers[i].known = false // another replica went on: from its newest, alone
		if err := s.addTurn(ctx, c, writers[i], deltas[c]); err != nil {
			return err
		}
	}
	return nil
}

// insertMarks inserts docs into coll, those that exist left as they are, and sets counted[of[i]]
// for each doc that went in now.
func (s *Store) insertMarks(ctx context.Context, coll string, docs []any, of []int, counted []bool) error {
	if len(docs) == 0 {
		return nil
	}
	added, err := mongox.InsertNew(ctx, s.c(coll), docs)
	if err != nil {
		return fmt.Errorf("store %s: %w", coll, err)
	}
	for i, ok := range added {
		counted[of[i]] = ok
	}
	return nil
}

// dailyModels are the updates that add n to each analytics document daily names.
func dailyModels(daily map[string]int64) []mongo.WriteModel {
	models := make([]mongo.WriteModel, 0, len(daily)+1)
	for _, id := range slices.Sorted(maps.Keys(daily)) {
		models = append(models, mongo.NewUpdateOneModel().SetFilter(mongox.ByID(id)).SetUpsert(true).
			SetUpdate(bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: daily[id]}}}}))
	}
	return models
}

// Daily reads an object's analytics from day since on (one find of a range bounded by four kinds a
// day): day (YYYYMMDD) and kind to count.
func (s *Store) Daily(ctx context.Context, objectID string, since time.Time) (map[string]map[string]int64, error) {
	scope := mongox.Scope("an", mongox.IDPart(objectID))
	r := mongox.Range{Scope: scope, After: scope + dayPart(since.AddDate(0, 0, -1)) + "|~"}
	docs, err := mongox.Find[daily](ctx, s.c(Counts), r)
	if err != nil {
		return nil, fmt.Errorf("store analytics: %w", err)
	}
	out := map[string]map[string]int64{}
	for _, d := range docs {
		rest := d.ID[len(scope):]
		if len(rest) < 10 {
			continue
		}
		day, kind := rest[:8], rest[9:]
		if out[day] == nil {
			out[day] = map[string]int64{}
		}
		out[day][kind] = d.N
	}
	return out, nil
}
