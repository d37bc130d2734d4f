package graph_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/testkit"
)

// rankNode is a node of TestMemorySearchScoresEveryTermOfTheNode: its scored stems and counts,
// the stems it indexed.
type rankNode struct {
	entry   store.MemoryEntry
	indexed []string
}

// rankNodes are 60 nodes, one a second: every one indexes "kestrel" (1 to 3 times in it); a
// quarter index "falcon" and a quarter hold it without indexing it; a third index "owl" and a
// third hold it without indexing it; every fifth is a decision. Their lengths vary.
func rankNodes(base time.Time) []rankNode {
	var out []rankNode
	for i := range 60 {
		stems, counts, indexed := []string{"kestrel"}, []int{1 + i%3}, []string{"kestrel"}
		if i%4 < 2 {
			stems, counts = append(stems, "falcon"), append(counts, 1+i%5)
			if i%4 == 0 {
				indexed = append(indexed, "falcon")
			}
		}
		if i%3 < 2 {
			stems, counts = append(stems, "owl"), append(counts, 1+i%2)
			if i%3 == 0 {
				indexed = append(indexed, "owl")
			}
		}
		length := 0
		for j := range 1 + i%7 {
			stems, counts = append(stems, fmt.Sprint("w", j)), append(counts, 1)
		}
		for _, c := range counts {
			length += c
		}
		ty := "evidence"
		if i%5 == 0 {
			ty = "decision"
		}
		out = append(out, rankNode{entry: store.MemoryEntry{NodeID: fmt.Sprintf("nod_%02d", i), ThreadID: "thr_ab", Type: ty,
			PeerID: "obj_b", AuthorID: "obj_a", CreatedAt: base.Add(time.Duration(i) * time.Second), Excerpt: "node " + fmt.Sprint(i),
			Len: length, Stems: stems, Counts: counts}, indexed: indexed})
	}
	return out
}

// TestMemorySearchScoresEveryTermOfTheNode: a search scores a node on every query term among its
// scored stems, whichever term found it and whether or not the posting of another term was
// read (a term the node holds without indexing it; an indexed one older than the range read):
// the same index written as earlier releases wrote it, every posting carrying the node's stems,
// ranks the same nodes with the same scores for searches of one, two and three terms, filtered
// and paged. A search reads the cards of its candidates (their stems, what a hit shows) and the
// hashes they name in one find: at most 2 commands per term.
func TestMemorySearchScoresEveryTermOfTheNode(t *testing.T) {
	t.Parallel()
	cmds := &commandLog{counts: map[string]int{}}
	now := monitoredService(t, "ranknow", cmds.started)
	thenDB := testkit.Database(t, testkit.Backends(t), "rankthen")
	then := serviceOn(t, thenDB)
	ctx := context.Background()
	base := clock.Now().Add(-time.Hour)
	nodes := rankNodes(base)
	entries, indexed := make([]store.MemoryEntry, len(nodes)), make([][]string, len(nodes))
	for i, n := range nodes {
		entries[i], indexed[i] = n.entry, n.indexed
	}
	if err := now.Store.IndexMemory(ctx, "obj_a", entries, indexed); err != nil {
		t.Fatal(err)
	}
	// The earlier releases' layout, written directly: the node's stems on every posting.
	old := []any{bson.D{{Key: "_id", Value: "n|obj_a"}, {Key: "nodes", Value: int64(len(nodes))}, {Key: "first", Value: base}}}
	for _, n := range nodes {
		e := n.entry
		var sc []string
		for i, st := range e.Stems {
			sc = append(sc, fmt.Sprintf("%s:%d", st, e.Counts[i]))
		}
		for _, stem := range n.indexed {
			old = append(old, bson.D{{Key: "_id", Value: store.PostingID("obj_a", stem, e.CreatedAt, e.NodeID)}, {Key: "n", Value: e.NodeID},
				{Key: "t", Value: e.ThreadID}, {Key: "ty", Value: e.Type}, {Key: "p", Value: e.PeerID}, {Key: "a", Value: e.AuthorID},
				{Key: "c", Value: e.CreatedAt}, {Key: "x", Value: e.Excerpt}, {Key: "dl", Value: e.Len},
				{Key: "sc", Value: strings.Join(sc, " ")}, {Key: "nd", Value: int64(len(nodes))}, {Key: "fi", Value: base}})
		}
	}
	if _, err := thenDB.Collection(store.MemoryPostings).InsertMany(ctx, old); err != nil {
		t.Fatal(err)
	}
	type scored struct {
		node  string
		score float64
	}
	search := func(s *graph.Service, q graph.MemoryQuery) []scored {
		t.Helper()
		res, err := s.SearchMemory(ctx, alice, q)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]scored, len(res.Hits))
		for i, h := range res.Hits {
			out[i] = scored{h.NodeID, h.Score}
		}
		return out
	}
	unindexedFalcon := 0
	for _, q := range []graph.MemoryQuery{
		{Q: "kestrel", Limit: 10},
		{Q: "kestrel falcon", Limit: 10},
		{Q: "kestrel falcon", Limit: 10, Offset: 10},
		{Q: "falcon kestrel", Limit: 10, Types: []string{"evidence"}},
		{Q: "kestrel falcon owl", Limit: 10},
		{Q: "owl falcon", Limit: 5},
		{Q: "owl kestrel", Limit: 50},
	} {
		cmds.take()
		got := search(now, q)
		c := cmds.take()
		want := search(then, q)
		if len(got) == 0 || !slices.Equal(got, want) {
			t.Errorf("%q (offset %d, types %v) ranks %v; the earlier layout ranks %v", q.Q, q.Offset, q.Types, got, want)
		}
		terms := len(strings.Fields(q.Q))
		t.Logf("%q (offset %d): %d commands, %v", q.Q, q.Offset, cmds.total(c), c)
		if cmds.total(c) > 2*terms || terms == 1 && cmds.total(c) != 2 {
			t.Errorf("%q cost %v; want at most 2 commands per term, 2 for one term", q.Q, c)
		}
		if q.Q == "kestrel falcon" && q.Offset == 0 {
			for _, h := range got {
				var i int
				fmt.Sscanf(h.node, "nod_%d", &i)
				if i%4 == 1 {
					unindexedFalcon++
				}
			}
		}
	}
	if unindexedFalcon == 0 {
		t.Errorf("no node that holds falcon without indexing it ranks among kestrel falcon's first ten")
	}
}
