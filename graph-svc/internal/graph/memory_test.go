package graph_test

import (
	"context"
	"testing"
	"time"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/pkg/clock"
)

func nodeIDs(hits []graph.MemoryHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.NodeID
	}
	return out
}

// TestMemorySearchSupersessionAndPrivacy: a search for "ship" with the peer finds the current
// decision only, both with include_superseded, and the superseded one as current as of a time
// between them; stemming matches "shipping"; the other side's owner_only node and anyone's
// guidance never come back, while the author finds its own owner_only node.
func TestMemorySearchSupersessionAndPrivacy(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	ctx := context.Background()
	friday, err := s.Decide(ctx, "req1", alice, "thr_ab", graph.DecisionDraft{Title: "Ship on Friday", Body: "We ship the release on Friday."})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	between := clock.Now()
	time.Sleep(5 * time.Millisecond)
	monday, err := s.Decide(ctx, "req2", bob, "thr_ab", graph.DecisionDraft{Title: "Ship on Monday", Body: "Shipping moves to Monday.",
		Supersedes: []string{friday.ID}})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := s.AddNode(ctx, bob, "thr_ab", graph.NodeDraft{Type: "private_goal", Body: "ship secretmarker cheaply", Visibility: graph.OwnerOnly})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutGuidance(ctx, alice, "thr_ab", "ship guidancemarker"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutGuidance(ctx, bob, "thr_ab", "ship guidancemarker"); err != nil {
		t.Fatal(err)
	}

	search := func(c graph.Caller, q graph.MemoryQuery) []graph.MemoryHit {
		t.Helper()
		if q.Limit == 0 {
			q.Limit = 10
		}
		r, err := s.SearchMemory(ctx, c, q)
		if err != nil {
			t.Fatal(err)
		}
		return r.Hits
	}
	hits := search(alice, graph.MemoryQuery{Q: "ship", PeerHash: "svc_b"})
	if got := nodeIDs(hits); len(got) != 1 || got[0] != monday.ID {
		t.Fatalf("default search = %v, want only monday %s", got, monday.ID)
	}
	h := hits[0]
	if h.ThreadID != "thr_ab" || h.Type != "decision" || h.AuthorHash != "svc_b" || h.PeerHash == nil || *h.PeerHash != "svc_b" ||
		h.SupersededBy != nil || h.Score <= 0 {
		t.Fatalf("hit = %+v", h)
	}
	hits = search(alice, graph.MemoryQuery{Q: "shipped", PeerHash: "svc_b", IncludeSuperseded: true})
	if got := nodeIDs(hits); len(got) != 2 {
		t.Fatalf("include_superseded = %v, want friday and monday", got)
	}
	for _, h := range hits {
		if h.NodeID == friday.ID && (h.SupersededBy == nil || *h.SupersededBy != monday.ID) {
			t.Fatalf("friday's hit = %+v, want superseded by monday", h)
		}
	}
	hits = search(alice, graph.MemoryQuery{Q: "ship", PeerHash: "svc_b", AsOf: &between})
	if got := nodeIDs(hits); len(got) != 1 || got[0] != friday.ID || hits[0].SupersededBy != nil {
		t.Fatalf("as_of between = %+v, want friday as current", hits)
	}
	if got := search(alice, graph.MemoryQuery{Q: "ship", PeerHash: "svc_nobody"}); len(got) != 0 {
		t.Fatalf("another peer's search = %v", nodeIDs(got))
	}
	if got := search(alice, graph.MemoryQuery{Q: "secretmarker guidancemarker"}); len(got) != 0 {
		t.Fatalf("alice found %v: the other side's owner_only node or guidance", nodeIDs(got))
	}
	if got := nodeIDs(search(bob, graph.MemoryQuery{Q: "secretmarker guidancemarker"})); len(got) != 1 || got[0] != secret.ID {
		t.Fatalf("bob's search of his own owner_only node = %v, want %s and no guidance", got, secret.ID)
	}
	if got := nodeIDs(search(alice, graph.MemoryQuery{Q: "ship", Types: []string{"private_goal", "evidence"}})); len(got) != 0 {
		t.Fatalf("types filter = %v", got)
	}
}

// TestMemorySearchWorldTime: valid_at keeps the decisions whose world time holds then.
func TestMemorySearchWorldTime(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	ctx := context.Background()
	jan := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	feb := time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC)
	d, err := s.Decide(ctx, "req", alice, "thr_ab", graph.DecisionDraft{Title: "Price", Body: "price is 10 euros",
		ValidFrom: &jan, ValidUntil: &feb})
	if err != nil {
		t.Fatal(err)
	}
	if d.ValidFrom == nil || *d.ValidFrom != clock.Format(jan) {
		t.Fatalf("decision view = %+v", d)
	}
	for at, want := range map[time.Time]int{jan.Add(time.Hour): 1, feb: 0, jan.Add(-time.Hour): 0} {
		r, err := s.SearchMemory(ctx, bob, graph.MemoryQuery{Q: "prices", ValidAt: &at, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Hits) != want {
			t.Fatalf("valid_at %s: %d hits, want %d", at, len(r.Hits), want)
		}
	}
	if _, err := s.Decide(ctx, "req", alice, "thr_ab", graph.DecisionDraft{Title: "x", Body: "y", ValidFrom: &feb, ValidUntil: &jan}); err == nil {
		t.Fatal("valid_until before valid_from was accepted")
	}
}
