package webhook

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// TestDeliveryLogPagesCountsAndRecovers sends five events to a receiver that refuses the first
// three for good (400) and takes the last two: the log pages them newest first, by outcome and
// by time; the counts say 5 attempts, 2 succeeded, 3 failed; recover since before them sends
// each failed one again exactly once (a repeated recover sends nothing), and nothing else.
func TestDeliveryLogPagesCountsAndRecovers(t *testing.T) {
	t.Parallel()
	e := newSenderEnv(t)
	ctx := context.Background()
	subs := &Subscriptions{Store: e.st}
	owner := &contract.Target{ObjectID: e.sub.ObjectID}
	start := clock.Now()
	e.status = []int{http.StatusBadRequest, http.StatusBadRequest, http.StatusBadRequest}
	var batch []events.Event
	for i := range 5 {
		batch = append(batch, message(fmt.Sprintf("evt_%d", i)))
	}
	if err := e.fanout.Handle(ctx, batch); err != nil {
		t.Fatal(err)
	}
	e.sender.busy.Wait()

	seqs := func(outcome string, limit int) ([]string, int) {
		var ids []string
		pages := 0
		var before string
		for {
			page, next, err := subs.Attempts(ctx, owner, e.sub.ID, AttemptQuery{Outcome: outcome, Before: before, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, en := range page {
				ids = append(ids, en.EventID)
			}
			if next == "" {
				return ids, pages
			}
			before = next
		}
	}
	if ids, pages := seqs("", 2); len(ids) != 5 || pages != 3 {
		t.Fatalf("all attempts in pages of 2: %v in %d pages, want 5 in 3", ids, pages)
	}
	// Outcomes are recorded beside the lane, several at once: the log's order is theirs.
	if ids, _ := seqs(store.OutcomeFailed, 10); !slices.Equal(sorted(ids), []string{"evt_0", "evt_1", "evt_2"}) {
		t.Fatalf("failed attempts %v, want evt_0, evt_1, evt_2", ids)
	}
	if ids, _ := seqs(store.OutcomeSucceeded, 10); !slices.Equal(sorted(ids), []string{"evt_3", "evt_4"}) {
		t.Fatalf("succeeded attempts %v, want evt_4, evt_3", ids)
	}
	later := clock.Now().Add(time.Second)
	if page, _, err := subs.Attempts(ctx, owner, e.sub.ID, AttemptQuery{Since: later, Limit: 10}); err != nil || len(page) != 0 {
		t.Fatalf("attempts since after them all: %d (%v), want none", len(page), err)
	}
	if page, _, err := subs.Attempts(ctx, owner, e.sub.ID, AttemptQuery{Until: start, Limit: 10}); err != nil || len(page) != 0 {
		t.Fatalf("attempts until before them all: %d (%v), want none", len(page), err)
	}
	n, err := subs.CountAttempts(ctx, owner, e.sub.ID, start.Add(-time.Second), later)
	if err != nil {
		t.Fatal(err)
	}
	if n.Attempts != 5 || n.Succeeded != 2 || n.Failed != 3 {
		t.Fatalf("counts %+v, want 5 attempts, 2 succeeded, 3 failed", n)
	}
	if n, _ := subs.CountAttempts(ctx, owner, e.sub.ID, later, later.Add(time.Hour)); n.Attempts != 0 {
		t.Fatalf("counts of a later window %+v, want none", n)
	}

	r, err := subs.Recover(ctx, owner, e.sub.ID, start.Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if r.Recovered != 3 || r.More {
		t.Fatalf("recover: %+v, want 3 recovered and none left", r)
	}
	if r, err := subs.Recover(ctx, owner, e.sub.ID, start.Add(-time.Second)); err != nil || r.Recovered != 0 {
		t.Fatalf("the same recover again: %+v (%v), want nothing sent again", r, err)
	}
	if err := e.sender.poll(ctx); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, id := range e.received() {
		count[id]++
	}
	for i := range 5 {
		id, want := fmt.Sprintf("evt_%d", i), 1
		if i < 3 {
			want = 2 // refused once, then recovered
		}
		if count[id] != want {
			t.Errorf("%s was sent %d times, want %d", id, count[id], want)
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
