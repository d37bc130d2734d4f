package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// newStore returns a store over a database of the test's own, with the collections and indexes
// the service creates at start-up.
func newStore(t *testing.T) *Store {
	t.Helper()
	db := testkit.Database(t, testkit.Backends(t), "webhook")
	if err := mongox.EnsureIndexes(context.Background(), db, Indexes); err != nil {
		t.Fatal(err)
	}
	return New(db)
}

// schedule returns every entry of the schedule, by delivery id.
func schedule(t *testing.T, st *Store) map[string]time.Time {
	t.Helper()
	all, err := st.DueEntries(context.Background(), "", time.Now().Add(1000*time.Hour), 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]time.Time{}
	for _, e := range all {
		out[e.ID] = e.DueAt
	}
	return out
}

// TestDueEntries checks the schedule's writes: a delivery inserted again adds no entry, the
// due list is ordered, bounded and read in pages (each after the last entry of the one before),
// and deletes take several at once.
func TestDueEntries(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	a := &Delivery{ID: "evt_1.whk_1", NextAttemptAt: at(-time.Second), CreatedAt: now}
	b := &Delivery{ID: "dlv b", NextAttemptAt: at(-2 * time.Second), CreatedAt: now} // an id outside the key alphabet
	if _, err := st.InsertScheduled(ctx, []*Delivery{a, b}); err != nil {
		t.Fatal(err)
	}
	// A redelivered event schedules its deliveries again, one of them new.
	c := &Delivery{ID: "c", NextAttemptAt: at(time.Hour), CreatedAt: now}
	if _, err := st.InsertScheduled(ctx, []*Delivery{a, c}); err != nil {
		t.Fatalf("inserting an existing entry: %v", err)
	}
	due, err := st.DueEntries(ctx, "", now.Add(-time.Second), 10)
	if err != nil || len(due) != 2 || due[0].ID != b.ID || due[1].ID != a.ID || !due[1].DueAt.Equal(*a.NextAttemptAt) {
		t.Fatalf("due entries = %+v, %v; want b then a (due at the time asked for)", due, err)
	}
	first, _ := st.DueEntries(ctx, "", now, 1)
	if len(first) != 1 || first[0].ID != b.ID {
		t.Fatalf("due entries with limit 1 = %+v", first)
	}
	if next, _ := st.DueEntries(ctx, first[0].Key, now, 1); len(next) != 1 || next[0].ID != a.ID {
		t.Fatalf("the page after %s = %+v, want a", first[0].Key, next)
	}
	if rest, _ := st.DueEntries(ctx, due[1].Key, now, 1); len(rest) != 0 {
		t.Fatalf("the page after the last due entry = %+v, want none", rest)
	}
	if err := st.DeleteDue(ctx, Due(a.ID, *a.NextAttemptAt), Due(b.ID, *b.NextAttemptAt), Due("x", now)); err != nil {
		t.Fatal(err)
	}
	if got := schedule(t, st); len(got) != 1 || got["c"].IsZero() {
		t.Fatalf("after deletes: %v", got)
	}
}

// TestSweepDeliveries checks the retention sweep: final deliveries made before the cutoff go
// with their entries, a pending one and newer ones stay.
func TestSweepDeliveries(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	old := now.Add(-48 * time.Hour)
	ds := []*Delivery{
		{ID: "dlv_done", Status: StatusSucceeded, CreatedAt: old},
		{ID: "dlv_failed", Status: StatusFailed, CreatedAt: old},
		{ID: "dlv_pending", Status: StatusPending, CreatedAt: old, NextAttemptAt: &now},
		{ID: "dlv_new", Status: StatusSucceeded, CreatedAt: now},
	}
	if _, err := st.InsertScheduled(ctx, ds); err != nil {
		t.Fatal(err)
	}
	n, err := st.SweepDeliveries(ctx, now.Add(-24*time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("swept %d, %v; want 2", n, err)
	}
	left, err := st.DeliveriesByID(ctx, []string{"dlv_done", "dlv_failed", "dlv_pending", "dlv_new"})
	if err != nil || len(left) != 2 || left["dlv_pending"] == nil || left["dlv_new"] == nil {
		t.Fatalf("left after the sweep: %v, %v", left, err)
	}
	if n, err := st.SweepDeliveries(ctx, now.Add(-24*time.Hour)); err != nil || n != 0 {
		t.Fatalf("a second sweep deleted %d, %v", n, err)
	}
}

// TestCarryOverEarlierLayout writes a store as the earlier release left it (deliveries with a due
// entry by delivery id, delivery logs as mongox.Log lists) and carries it over: pending
// deliveries are due at their next attempt, final ones are swept after the retention, the logs
// page, count and recover as before; a later run within the window carries what an older
// replica wrote since, and the first run after it drops the earlier collections.
func TestCarryOverEarlierLayout(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	db := st.db
	now := time.Now().UTC().Truncate(time.Millisecond)
	created := now.Add(-48 * time.Hour)
	retry := now.Add(-time.Minute)
	for _, d := range []*Delivery{
		{ID: "evt_1.whk_1", SubscriptionID: "whk_1", Status: StatusPending, NextAttemptAt: &retry},
		{ID: "evt_2.whk_1", SubscriptionID: "whk_1", Status: StatusFailed},
		{ID: "evt_3.whk_1", SubscriptionID: "whk_1", Status: StatusSucceeded},
	} {
		d.CreatedAt, d.Attempts = created, []Attempt{}
		if _, err := st.InsertDeliveries(ctx, []*Delivery{d}); err != nil {
			t.Fatal(err)
		}
	}
	line := func(list string, n int, e AttemptEntry) bson.D {
		return bson.D{{Key: "_id", Value: fmt.Sprintf("%s#%d", list, n)}, {Key: "seq", Value: n}, {Key: "at", Value: e.At},
			{Key: "v", Value: e}}
	}
	e1 := AttemptEntry{DeliveryID: "evt_1.whk_1", EventID: "evt_1", Event: "message", Attempt: 1, Outcome: OutcomeRetrying, StatusCode: 503, At: created}
	e2 := AttemptEntry{DeliveryID: "evt_2.whk_1", EventID: "evt_2", Event: "message", Attempt: 1, Outcome: OutcomeFailed, StatusCode: 400, At: created.Add(time.Second)}
	e3 := AttemptEntry{DeliveryID: "evt_3.whk_1", EventID: "evt_3", Event: "message", Attempt: 1, Outcome: OutcomeSucceeded, StatusCode: 200, At: created.Add(2 * time.Second)}
	if _, err := db.Collection(OldLogs).InsertMany(ctx, []any{
		line("attempts:whk_1", 1, e1), line("attempts:whk_1", 2, e2), line("attempts:whk_1", 3, e3),
		line("attempts:whk_1:failed", 1, e2), line("attempts:whk_1:succeeded", 1, e3),
		bson.D{{Key: "_id", Value: "attempts:whk_1#head"}, {Key: "seq", Value: 3}},
		bson.D{{Key: "_id", Value: "attempts:whk_1:failed@evt_2.whk_1"}, {Key: "seq", Value: 1}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection(OldDue).InsertOne(ctx, bson.D{{Key: "_id", Value: "evt_1.whk_1"}, {Key: "due_at", Value: retry}}); err != nil {
		t.Fatal(err)
	}

	const window = time.Hour
	if n, err := st.CarryOver(ctx, now, window); err != nil || n != 8 {
		t.Fatalf("the first run carried %d, %v; want 3 deliveries and 5 log lines", n, err)
	}
	if got := schedule(t, st); len(got) != 1 || !got["evt_1.whk_1"].Equal(retry) {
		t.Fatalf("schedule after the carry-over: %v", got)
	}
	events := func(outcome string) []string {
		page, err := st.Attempts(ctx, AttemptRange{SubscriptionID: "whk_1", Outcome: outcome}, 10, false)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range page {
			out = append(out, e.EventID)
		}
		return out
	}
	if all, failed, ok := events(""), events(OutcomeFailed), events(OutcomeSucceeded); fmt.Sprint(all, failed, ok) != "[evt_3 evt_2 evt_1] [evt_2] [evt_3]" {
		t.Fatalf("carried logs: all %v, failed %v, succeeded %v", all, failed, ok)
	}
	if n, err := st.CountAttempts(ctx, AttemptRange{SubscriptionID: "whk_1", Since: created.Add(time.Second), Until: now}); err != nil || n != 2 {
		t.Fatalf("attempts counted since the second: %d, %v; want 2", n, err)
	}

	// An older replica still running stores a delivery and logs an attempt the earlier way.
	fresh := now.Add(time.Minute)
	if _, err := st.InsertDeliveries(ctx, []*Delivery{{ID: "evt_4.whk_1", SubscriptionID: "whk_1", Status: StatusPending, NextAttemptAt: &fresh, CreatedAt: now, Attempts: []Attempt{}}}); err != nil {
		t.Fatal(err)
	}
	e4 := AttemptEntry{DeliveryID: "evt_3.whk_1", EventID: "evt_3", Attempt: 2, Outcome: OutcomeRetrying, At: now}
	if _, err := db.Collection(OldLogs).InsertOne(ctx, line("attempts:whk_1", 4, e4)); err != nil {
		t.Fatal(err)
	}
	if n, err := st.CarryOver(ctx, now.Add(10*time.Minute), window); err != nil || n != 2 {
		t.Fatalf("a run within the window carried %d, %v; want the new delivery and line", n, err)
	}
	if got := schedule(t, st); len(got) != 2 || !got["evt_4.whk_1"].Equal(fresh) {
		t.Fatalf("schedule after a run within the window: %v", got)
	}
	if n, err := st.CarryOver(ctx, now.Add(window), window); err != nil || n != 0 {
		t.Fatalf("a run after the window carried %d, %v; want nothing", n, err)
	}
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil || slices.Contains(names, OldLogs) || slices.Contains(names, OldDue) {
		t.Fatalf("collections after the window: %v, %v", names, err)
	}
	if n, err := st.SweepDeliveries(ctx, now.Add(-24*time.Hour)); err != nil || n != 2 {
		t.Fatalf("the sweep after the carry-over deleted %d, %v; want the two final deliveries", n, err)
	}
}

// TestCarryOverOfAFreshDatabase: on a database no release of the earlier layout ever ran on, the
// first run carries nothing and marks the carry-over done, so that later runs within the window
// read none of the deliveries this release stores.
func TestCarryOverOfAFreshDatabase(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	const window = time.Hour
	if n, err := st.CarryOver(ctx, now, window); err != nil || n != 0 {
		t.Fatalf("the first run on a fresh database carried %d, %v; want nothing", n, err)
	}
	next := now.Add(time.Minute)
	if _, err := st.InsertDeliveries(ctx, []*Delivery{{ID: "evt_1.whk_1", SubscriptionID: "whk_1", Status: StatusPending,
		NextAttemptAt: &next, CreatedAt: now, Attempts: []Attempt{}}}); err != nil {
		t.Fatal(err)
	}
	if n, err := st.CarryOver(ctx, now.Add(10*time.Minute), window); err != nil || n != 0 {
		t.Fatalf("a run within the window carried %d, %v; want nothing", n, err)
	}
	for _, marker := range []string{rangesMigration, droppedMigration} {
		if done, err := st.MigrationDone(ctx, marker); err != nil || !done {
			t.Fatalf("marker %s: %v, %v", marker, done, err)
		}
	}
}
