package store

import (
	"context"
	"testing"
	"time"

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
	all, err := st.DueEntries(context.Background(), time.Now().Add(1000*time.Hour), 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]time.Time{}
	for _, e := range all {
		out[e.ID] = e.DueAt
	}
	return out
}

// TestDueEntries checks the schedule's writes: an insert keeps an existing entry as it is, the
// due list is ordered and bounded, a move adds a missing entry, and deletes take several at once.
func TestDueEntries(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	if err := st.InsertDue(ctx, DueEntry{ID: "a", DueAt: now.Add(-time.Second)}, DueEntry{ID: "b", DueAt: now.Add(-2 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	// A redelivered event schedules its deliveries again, one of them new.
	if err := st.InsertDue(ctx, DueEntry{ID: "a", DueAt: now.Add(time.Hour)}, DueEntry{ID: "c", DueAt: now.Add(time.Hour)}); err != nil {
		t.Fatalf("inserting an existing entry: %v", err)
	}
	due, err := st.DueEntries(ctx, now, 10)
	if err != nil || len(due) != 2 || due[0].ID != "b" || due[1].ID != "a" || !due[1].DueAt.Equal(now.Add(-time.Second)) {
		t.Fatalf("due entries = %+v, %v; want b then a, a unchanged", due, err)
	}
	if due, _ := st.DueEntries(ctx, now, 1); len(due) != 1 || due[0].ID != "b" {
		t.Fatalf("due entries with limit 1 = %+v", due)
	}
	if err := st.MoveDue(ctx, "b", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := st.MoveDue(ctx, "d", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	got := schedule(t, st)
	if !got["b"].Equal(now.Add(time.Minute)) || !got["d"].Equal(now.Add(time.Minute)) || len(got) != 4 {
		t.Fatalf("after moves: %v", got)
	}
	if err := st.DeleteDue(ctx, "a", "b", "x"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteDue(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if got := schedule(t, st); len(got) != 1 || got["d"].IsZero() {
		t.Fatalf("after deletes: %v", got)
	}
}

// TestScheduleStoredDeliveriesOnce stores deliveries as the service did before the schedule
// existed: the first start gives each pending one an entry at its next attempt; later starts
// within the upgrade window schedule only what an older replica stored since, and after the
// window nothing.
func TestScheduleStoredDeliveriesOnce(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	created := now.Add(-24 * time.Hour)
	retry, later := now.Add(-time.Minute), now.Add(time.Hour)
	for _, d := range []*Delivery{
		{ID: "dlv_retry", Status: StatusPending, NextAttemptAt: &retry},
		{ID: "dlv_later", Status: StatusPending, NextAttemptAt: &later},
		{ID: "dlv_done", Status: StatusSucceeded},
		{ID: "dlv_failed", Status: StatusFailed},
	} {
		d.CreatedAt, d.Attempts = created, []Attempt{}
		if _, err := st.InsertDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	const window = time.Hour
	n, more, err := st.ScheduleStoredDeliveries(ctx, now, window)
	if err != nil || n != 2 || !more {
		t.Fatalf("first start scheduled %d (more %v), %v; want 2", n, more, err)
	}
	got := schedule(t, st)
	if len(got) != 2 || !got["dlv_retry"].Equal(retry) || !got["dlv_later"].Equal(later) {
		t.Fatalf("schedule after the first start: %v", got)
	}
	// An entry gone since (its delivery was then attempted) is not put back from the old scan,
	// but a delivery an older replica stored after the first start is scheduled.
	if err := st.DeleteDue(ctx, "dlv_later"); err != nil {
		t.Fatal(err)
	}
	fresh := now.Add(time.Minute)
	if _, err := st.InsertDelivery(ctx, &Delivery{ID: "dlv_fresh", Status: StatusPending, NextAttemptAt: &fresh, CreatedAt: now, Attempts: []Attempt{}}); err != nil {
		t.Fatal(err)
	}
	n, more, err = st.ScheduleStoredDeliveries(ctx, now.Add(10*time.Minute), window)
	if err != nil || n != 1 || !more {
		t.Fatalf("a start within the window scheduled %d (more %v), %v; want 1", n, more, err)
	}
	if got := schedule(t, st); len(got) != 2 || !got["dlv_fresh"].Equal(fresh) {
		t.Fatalf("schedule after a start within the window: %v", got)
	}
	if err := st.DeleteDue(ctx, "dlv_fresh"); err != nil {
		t.Fatal(err)
	}
	n, more, err = st.ScheduleStoredDeliveries(ctx, now.Add(window), window)
	if err != nil || n != 0 || more {
		t.Fatalf("a start after the window scheduled %d (more %v), %v; want nothing", n, more, err)
	}
	if got := schedule(t, st); len(got) != 1 {
		t.Fatalf("a start after the window changed the schedule: %v", got)
	}
}
