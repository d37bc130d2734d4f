package graph_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
)

// commandLog counts the store commands a client sends, by collection.
type commandLog struct {
	mu     sync.Mutex
	counts map[string]int
}

func (l *commandLog) started(_ context.Context, e *event.CommandStartedEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if coll, ok := e.Command.Index(0).Value().StringValueOK(); ok {
		l.counts[coll]++
	}
}

// take returns the counts since the last take.
func (l *commandLog) take() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.counts
	l.counts = map[string]int{}
	return c
}

func (l *commandLog) total(c map[string]int) int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// TestMemoryIndexCostIsConstant: projecting a message costs the same store commands for a short
// message and a 64 KiB one of thousands of distinct words, and its memory index work is three
// commands for its two participants, the same after a restart (here a new service): one move of
// each participant's index stats and one insert of the node's postings in both indexes. Nothing
// is read first.
func TestMemoryIndexCostIsConstant(t *testing.T) {
	t.Parallel()
	cmds := &commandLog{counts: map[string]int{}}
	warm := monitoredService(t, "memcost", cmds.started)
	newSvc := func() *graph.Service { return restarted(warm) }
	ctx := context.Background()
	var words strings.Builder
	for i := 0; words.Len() < 64<<10-16; i++ {
		fmt.Fprintf(&words, "w%dx%d ", i, i*7919%10007)
	}
	long := words.String()[:64<<10-16]
	i := 0
	project := func(s *graph.Service, body string) map[string]int {
		t.Helper()
		i++
		cmds.take()
		if err := s.ProjectMessages(ctx, []contract.MessageCreatedData{{MessageID: fmt.Sprintf("msg_%d", i), ThreadID: "thr_ab",
			FromObjectID: "obj_a", ToObjectID: "obj_b", FromHash: "svc_a", Body: body, CreatedAt: clock.Format(clock.Now())}}); err != nil {
			t.Fatal(err)
		}
		return cmds.take()
	}
	project(warm, "hello there") // the thread and the hashes are recorded once
	project(warm, "hello again")
	short, large := project(warm, "ship on friday"), project(warm, long)
	coldShort, coldLarge := project(newSvc(), "ship on monday"), project(newSvc(), long+" more")
	t.Logf("store commands of a projected message (warm): %d for 14 bytes, %d for 64 KiB; memory index: %d and %d",
		cmds.total(short), cmds.total(large), short[store.MemoryPostings], large[store.MemoryPostings])
	t.Logf("store commands after a restart: %d for 14 bytes, %d for 64 KiB; memory index: %d and %d",
		cmds.total(coldShort), cmds.total(coldLarge), coldShort[store.MemoryPostings], coldLarge[store.MemoryPostings])
	if cmds.total(short) != cmds.total(large) || short[store.MemoryPostings] != large[store.MemoryPostings] {
		t.Errorf("a 64 KiB message cost %v, a short one %v", large, short)
	}
	if coldShort[store.MemoryPostings] != coldLarge[store.MemoryPostings] || cmds.total(coldShort) != cmds.total(coldLarge) {
		t.Errorf("after a restart a 64 KiB message cost %v, a short one %v", coldLarge, coldShort)
	}
	if short[store.MemoryPostings] > 3 || coldShort[store.MemoryPostings] > 3 {
		t.Errorf("memory index commands: %d warm, %d cold for two participants; want at most 3",
			short[store.MemoryPostings], coldShort[store.MemoryPostings])
	}
}

// TestMemorySearchReadsOneRangePerTerm: a search sends one find of postings per query term and
// one command besides (the hashes the candidates name), as many with 30 nodes indexed as with
// 330: at most 2 per term, a one-term search 2 in all.
func TestMemorySearchReadsOneRangePerTerm(t *testing.T) {
	t.Parallel()
	cmds := &commandLog{counts: map[string]int{}}
	svc := monitoredService(t, "searchcost", cmds.started)
	ctx := context.Background()
	written := 0
	write := func(n int) { // the index's own writes, in batches: the search is measured, not the writes
		var entries []store.MemoryEntry
		var indexed [][]string
		for range n {
			written++
			stems := []string{"note", "kestrel", "falcon", "owl"}
			entries = append(entries, store.MemoryEntry{NodeID: fmt.Sprint("nod_", written), ThreadID: "thr_ab", Type: "evidence",
				PeerID: "obj_b", AuthorID: "obj_a", CreatedAt: clock.Now(), Len: 4, Stems: stems, Counts: []int{1, 1, 1, 1}})
			indexed = append(indexed, stems)
		}
		if err := svc.Store.IndexMemory(ctx, "obj_a", entries, indexed); err != nil {
			t.Fatal(err)
		}
	}
	search := func(q string) (postings, total int) {
		t.Helper()
		cmds.take()
		res, err := svc.SearchMemory(ctx, &contract.Principal{ObjectID: "obj_a", Hash: "svc_a"}, graph.MemoryQuery{Q: q, Limit: 10})
		if err != nil || len(res.Hits) != 10 {
			t.Fatalf("search %q: %d hits, %v", q, len(res.Hits), err)
		}
		c := cmds.take()
		return c[store.MemoryPostings], cmds.total(c)
	}
	write(30)
	var small [3][2]int
	for i, q := range []string{"kestrel", "kestrel falcon", "kestrel falcon owl"} {
		small[i][0], small[i][1] = search(q)
	}
	write(300)
	for i, q := range []string{"kestrel", "kestrel falcon", "kestrel falcon owl"} {
		terms := i + 1
		postings, total := search(q)
		t.Logf("a search of %d terms: %d commands on the index (%d with 30 nodes), %d in all (%d with 30 nodes)",
			terms, postings, small[i][0], total, small[i][1])
		if postings != terms || total != terms+1 || postings != small[i][0] || total != small[i][1] {
			t.Errorf("a search of %d terms cost %d index commands and %d in all (%v with 30 nodes); want %d and %d",
				terms, postings, total, small[i], terms, terms+1)
		}
		if total > 2*terms {
			t.Errorf("a search of %d terms cost %d commands, more than 2 per term", terms, total)
		}
	}
}

// TestReplyProjectionCost: a message whose event names the message it follows takes the
// position after that one's in its thread's messages, read with the batch's stored nodes: its
// projection, one event at a time as a quiet stack sends them, is one find of the nodes, one
// insert into the lists (its numbered entry and its graph entry together), one move of each
// participant's index stats with one insert of both indexes' postings, and the node's insert.
// No read of the messages' last.
func TestReplyProjectionCost(t *testing.T) {
	t.Parallel()
	cmds := &commandLog{counts: map[string]int{}}
	svc := monitoredService(t, "replycost", cmds.started)
	ctx := context.Background()
	prev := ""
	for i := range 8 {
		id := fmt.Sprintf("msg_%d", i)
		cmds.take()
		if err := svc.ProjectMessages(ctx, []contract.MessageCreatedData{{MessageID: id, ThreadID: "thr_ab",
			FromObjectID: "obj_a", ToObjectID: "obj_b", FromHash: "svc_a", ToHash: "svc_b", Body: "reply number " + id,
			CreatedAt: clock.Format(clock.Now()), PrevMessageID: prev}}); err != nil {
			t.Fatal(err)
		}
		got := cmds.take()
		prev = id
		if i == 0 { // the thread and the hashes are recorded once; nothing of it is read
			if got[store.Nodes] != 1 || got[store.Lists] != 1 {
				t.Errorf("the thread's first message cost %v; want the node's insert and one lists insert, no read", got)
			}
			continue
		}
		t.Logf("store commands of reply %d: %d %v", i, cmds.total(got), got)
		if got[store.Lists] != 1 || got[store.MemoryPostings] != 3 || cmds.total(got) != 6 {
			t.Errorf("reply %d cost %v; want 1 lists insert, 3 memory commands, 6 in all", i, got)
		}
	}
	count, err := svc.Store.MessageCount(ctx, "thr_ab")
	if err != nil || count != 8 {
		t.Fatalf("the thread numbers %d messages (%v), want 8", count, err)
	}
	for _, obj := range []string{"obj_a", "obj_b"} { // listed by the first message's insert
		if ids, err := svc.Store.ThreadsPage(ctx, obj, 10); err != nil || len(ids) != 1 || ids[0] != "thr_ab" {
			t.Errorf("%s's threads: %v (%v), want thr_ab", obj, ids, err)
		}
	}
}
