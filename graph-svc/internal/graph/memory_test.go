package graph_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
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

	search := func(c *contract.Principal, q graph.MemoryQuery) []graph.MemoryHit {
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

// TestMemorySearchFindsAnOldRareTerm: with several hundred messages indexed (past a level-2
// block of the presence marks), a word said once in an early message is found, a word said in
// every message finds the newest ones first, a page deeper in the ranking comes through the
// offset, and a restarted process reads and extends the index from the store.
func TestMemorySearchFindsAnOldRareTerm(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	ctx := context.Background()
	start := clock.Now().Add(-time.Hour)
	const n = 300
	var msgs []contract.MessageCreatedData
	for i := range n {
		body := fmt.Sprintf("status update %d about the weekly sync", i)
		if i == 7 {
			body += " and the zeppelin launch"
		}
		msgs = append(msgs, contract.MessageCreatedData{MessageID: fmt.Sprintf("msg_%03d", i), ThreadID: "thr_ab",
			FromObjectID: "obj_a", ToObjectID: "obj_b", FromHash: "svc_a", Body: body,
			CreatedAt: clock.Format(start.Add(time.Duration(i) * time.Second))})
	}
	if err := s.ProjectMessages(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	r, err := s.SearchMemory(ctx, bob, graph.MemoryQuery{Q: "zeppelins", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := nodeIDs(r.Hits); len(got) != 1 || got[0] != graph.MessageNodeID("msg_007") ||
		r.Hits[0].Provenance.MessageID == nil || *r.Hits[0].Provenance.MessageID != "msg_007" {
		t.Fatalf("zeppelin search = %+v, want msg_007's node", r.Hits)
	}
	r, err = s.SearchMemory(ctx, alice, graph.MemoryQuery{Q: "weekly", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Hits) != 5 || r.NextOffset != 5 || r.Hits[0].NodeID != graph.MessageNodeID(fmt.Sprintf("msg_%03d", n-1)) {
		t.Fatalf("weekly search = %v (next %d), want the 5 newest first", nodeIDs(r.Hits), r.NextOffset)
	}
	next, err := s.SearchMemory(ctx, alice, graph.MemoryQuery{Q: "weekly", Limit: 5, Offset: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(next.Hits) != 5 || slices.Contains(nodeIDs(r.Hits), next.Hits[0].NodeID) {
		t.Fatalf("second page = %v after %v", nodeIDs(next.Hits), nodeIDs(r.Hits))
	}
	// After a restart (a process that remembers nothing) the index is read and written from the
	// store: a new message lands after the others and both are found.
	again := restarted(s)
	if err := again.ProjectMessages(ctx, []contract.MessageCreatedData{{MessageID: "msg_late", ThreadID: "thr_ab",
		FromObjectID: "obj_b", ToObjectID: "obj_a", FromHash: "svc_b", Body: "one more zeppelin", CreatedAt: clock.Format(clock.Now())}}); err != nil {
		t.Fatal(err)
	}
	r, err = again.SearchMemory(ctx, alice, graph.MemoryQuery{Q: "zeppelin", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := nodeIDs(r.Hits); len(got) != 2 || !slices.Contains(got, graph.MessageNodeID("msg_late")) || !slices.Contains(got, graph.MessageNodeID("msg_007")) {
		t.Fatalf("zeppelin search after a restart = %v, want msg_007's and msg_late's nodes", got)
	}
	for _, q := range []graph.MemoryQuery{{Q: " ", Limit: 10}, {Q: "ship", Limit: 51}, {Q: "ship", Limit: 10, Types: []string{"memo"}},
		{Q: strings.Repeat("x", 257), Limit: 10}} {
		if _, err := s.SearchMemory(ctx, alice, q); err == nil {
			t.Errorf("query %+v was accepted", q)
		}
	}
}

// TestMemorySearchReadsWorldTime: a decision's world time (valid_from, valid_until) comes back on
// its hit, and valid_at keeps only the decisions that hold at that time in the world.
func TestMemorySearchReadsWorldTime(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	ctx := context.Background()
	day := func(d int) *time.Time { v := time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC); return &v }
	march, err := s.Decide(ctx, "req1", alice, "thr_ab", graph.DecisionDraft{Title: "Office in Lyon", Body: "The office is in Lyon.",
		ValidFrom: day(1), ValidUntil: day(20)})
	if err != nil {
		t.Fatal(err)
	}
	later, err := s.Decide(ctx, "req2", alice, "thr_ab", graph.DecisionDraft{Title: "Office in Paris", Body: "The office is in Paris.",
		ValidFrom: day(20)})
	if err != nil {
		t.Fatal(err)
	}
	find := func(validAt *time.Time) []graph.MemoryHit {
		t.Helper()
		r, err := s.SearchMemory(ctx, alice, graph.MemoryQuery{Q: "office", ValidAt: validAt, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return r.Hits
	}
	hits := find(nil)
	if len(hits) != 2 {
		t.Fatalf("without valid_at: %v, want both decisions", nodeIDs(hits))
	}
	for _, h := range hits {
		if h.NodeID == march.ID && (h.ValidFrom == nil || *h.ValidFrom != clock.Format(*day(1)) || h.ValidUntil == nil || *h.ValidUntil != clock.Format(*day(20))) {
			t.Fatalf("march's hit carries world time %v..%v, want 2026-03-01..2026-03-20", h.ValidFrom, h.ValidUntil)
		}
	}
	if got := nodeIDs(find(day(10))); !slices.Equal(got, []string{march.ID}) {
		t.Fatalf("valid_at March 10: %v, want only %s", got, march.ID)
	}
	if got := nodeIDs(find(day(25))); !slices.Equal(got, []string{later.ID}) {
		t.Fatalf("valid_at March 25: %v, want only %s", got, later.ID)
	}
}
