package graph_test

import (
	"context"
	"fmt"
	"slices"
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
// commands for its two participants: one read of both participants' index stats, one write
// moving them and one insert of the node's postings in both indexes. After a restart (here a new
// service) the first message naming an object also makes sure its hash is copied beside the
// index: one command more there.
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
	if short[store.MemoryPostings] > 3 || coldShort[store.MemoryPostings] > 4 {
		t.Errorf("memory index commands: %d warm, %d cold for two participants; want at most 3 and 4",
			short[store.MemoryPostings], coldShort[store.MemoryPostings])
	}
}

// TestMemorySearchReadsOneRangePerTerm: a search sends one find of postings per query term and
// one command besides (the cards of the candidates and the hashes they name, from the same
// collection), as many with 30 nodes indexed as with 330: at most 2 per term, a one-term search
// 2 in all.
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
		if postings != terms+1 || total != terms+1 || postings != small[i][0] || total != small[i][1] {
			t.Errorf("a search of %d terms cost %d index commands and %d in all (%v with 30 nodes); want %d and %d",
				terms, postings, total, small[i], terms+1, terms+1)
		}
		if total > 2*terms {
			t.Errorf("a search of %d terms cost %d commands, more than 2 per term", terms, total)
		}
	}
}

// TestReplyProjectionCost: a message whose event names the message it follows takes the
// position after that one's in its thread's messages, read with the batch's stored nodes: its
// projection, one event at a time as a quiet stack sends them, is one find of the nodes, one
// insert into the lists (its numbered entry and its graph entry together), one read and one move
// of both participants' index stats with one insert of both indexes' postings, and the node's
// insert.
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

// TestBatchProjectionCostIsConstant: a batch of messages costs the same store commands whatever
// number of threads and objects it touches: 20 new threads between 20 objects cost what one new
// thread costs, and 20 replies in 20 threads what one reply costs (the lists' entries of every
// thread in one insert, every object's index stats in one read and one write, the postings of
// every node in one insert, every node in one insert).
func TestBatchProjectionCostIsConstant(t *testing.T) {
	t.Parallel()
	cmds := &commandLog{counts: map[string]int{}}
	svc := monitoredService(t, "batchcost", cmds.started)
	ctx := context.Background()
	const threads = 20
	msg := func(thread, i int, prev string) contract.MessageCreatedData {
		from, to := fmt.Sprintf("obj_%d", thread), fmt.Sprintf("obj_%d", (thread+1)%threads)
		return contract.MessageCreatedData{MessageID: fmt.Sprintf("msg_%d_%d", thread, i), ThreadID: fmt.Sprintf("thr_%d", thread),
			FromObjectID: from, ToObjectID: to, FromHash: "svc_" + from, ToHash: "svc_" + to, Body: fmt.Sprintf("note %d of thread %d", i, thread),
			CreatedAt: clock.Format(clock.Now()), PrevMessageID: prev}
	}
	project := func(msgs []contract.MessageCreatedData) map[string]int {
		t.Helper()
		cmds.take()
		if err := svc.ProjectMessages(ctx, msgs); err != nil {
			t.Fatal(err)
		}
		return cmds.take()
	}
	// Every object's hash, index stats and participation are recorded once, by a first thread
	// of each; the batches measured below meet them again, as a busy stack does.
	var warm []contract.MessageCreatedData
	for th := range threads {
		m := msg(th, 0, "")
		m.ThreadID = fmt.Sprintf("thr_warm_%d", th)
		warm = append(warm, m)
	}
	project(warm)
	one := project([]contract.MessageCreatedData{msg(0, 0, "")})
	var first []contract.MessageCreatedData
	for th := 1; th < threads; th++ {
		first = append(first, msg(th, 0, ""))
	}
	many := project(first)
	t.Logf("store commands of a batch of new threads' first messages: %d for 1 thread %v, %d for %d threads %v",
		cmds.total(one), one, cmds.total(many), threads-1, many)
	if cmds.total(many) != cmds.total(one) {
		t.Errorf("a batch of %d new threads cost %v, one new thread %v", threads-1, many, one)
	}
	oneReply := project([]contract.MessageCreatedData{msg(0, 1, "msg_0_0")})
	var replies []contract.MessageCreatedData
	for th := 1; th < threads; th++ {
		replies = append(replies, msg(th, 1, fmt.Sprintf("msg_%d_0", th)))
	}
	manyReplies := project(replies)
	t.Logf("store commands of a batch of replies: %d for 1 thread %v, %d for %d threads %v",
		cmds.total(oneReply), oneReply, cmds.total(manyReplies), threads-1, manyReplies)
	if cmds.total(manyReplies) != cmds.total(oneReply) || cmds.total(oneReply) != 6 {
		t.Errorf("a batch of %d replies cost %v, one reply %v; want 6 each", threads-1, manyReplies, oneReply)
	}
	for th := range threads { // each thread numbers its two messages, in order
		refs, err := svc.Store.MessagesAround(ctx, fmt.Sprintf("thr_%d", th), 1, 10)
		if err != nil || len(refs) != 2 || refs[0].Value.NodeID != graph.MessageNodeID(fmt.Sprintf("msg_%d_0", th)) ||
			refs[1].Value.NodeID != graph.MessageNodeID(fmt.Sprintf("msg_%d_1", th)) {
			t.Errorf("thr_%d numbers %v (%v), want its two messages in order", th, refs, err)
		}
	}
	// A redelivered batch adds nothing: each thread still numbers two messages, each object's
	// index holds its nodes once.
	project(append(first, replies...))
	for th := range threads {
		if n, err := svc.Store.MessageCount(ctx, fmt.Sprintf("thr_%d", th)); err != nil || n != 2 {
			t.Errorf("after a redelivery thr_%d numbers %d messages (%v), want 2", th, n, err)
		}
	}
	for obj := range threads {
		st, err := svc.Store.(*store.Store).MemoryStatsOf(ctx, fmt.Sprintf("obj_%d", obj))
		if err != nil || st.Nodes != 6 { // two messages in each of its two warm threads and its two threads
			t.Errorf("obj_%d's index counts %d nodes (%v), want 6", obj, st.Nodes, err)
		}
	}
}

// TestLearnedThreadFirstMessageReadsNoPosition: a graph read that comes before its thread's first
// message is projected learns the thread from mailbox-svc and records it; the first message's
// projection then takes position 1 with no read of the thread's messages (the thread is not new
// to the store, so its batch reads the stored nodes once), and shows in the graph.
func TestLearnedThreadFirstMessageReadsNoPosition(t *testing.T) {
	t.Parallel()
	cmds := &commandLog{counts: map[string]int{}}
	var mu sync.Mutex
	var lists []string
	svc := monitoredService(t, "learned", func(ctx context.Context, e *event.CommandStartedEvent) {
		cmds.started(ctx, e)
		if coll, _ := e.Command.Index(0).Value().StringValueOK(); coll == store.Lists {
			mu.Lock()
			lists = append(lists, e.CommandName)
			mu.Unlock()
		}
	})
	ctx := context.Background()
	if g, err := svc.Graph(ctx, bob, "thr_ab", graph.GraphPage{Limit: 10}); err != nil || len(g.Nodes) != 0 {
		t.Fatalf("graph before the first message: %v, %v", g, err)
	}
	mu.Lock()
	lists = nil
	mu.Unlock()
	if err := svc.ProjectMessages(ctx, []contract.MessageCreatedData{{MessageID: "msg_1", ThreadID: "thr_ab",
		FromObjectID: "obj_a", ToObjectID: "obj_b", FromHash: "svc_a", ToHash: "svc_b", Body: "first",
		CreatedAt: clock.Format(clock.Now())}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := slices.Clone(lists)
	mu.Unlock()
	if len(got) != 1 || got[0] != "insert" {
		t.Errorf("the first message's projection sent %v to the lists; want one insert, no read", got)
	}
	if n, err := svc.Store.MessageCount(ctx, "thr_ab"); err != nil || n != 1 {
		t.Errorf("the thread numbers %d messages (%v), want 1", n, err)
	}
	g, err := svc.Graph(ctx, bob, "thr_ab", graph.GraphPage{Limit: 10})
	if err != nil || len(g.Nodes) != 1 {
		t.Fatalf("graph after the first message: %v, %v", g, err)
	}
}
