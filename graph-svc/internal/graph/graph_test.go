package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/outbound"
	"github.com/svcdev/svc/pkg/rpc"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// mailbox stands in for mailbox-svc's thread reads: one thread between a and b.
type mailbox struct{}

func (mailbox) Thread(_ context.Context, id string) (*contract.Thread, error) {
	if id != "thr_ab" {
		return nil, rpc.ErrNotFound
	}
	return &contract.Thread{ThreadID: id, Participants: []contract.Participant{{ObjectID: "obj_a", Hash: "svc_a"}, {ObjectID: "obj_b", Hash: "svc_b"}}}, nil
}

// Blocked answers that no one blocks anyone: these tests run without control versions, so the
// projection of the blocks answers and this is never asked.
func (mailbox) Blocked(context.Context, string, string) (bool, error) { return false, nil }

// confirmed records the events handed to the relay of the real outbox.
type confirmed struct {
	*events.Outbox
	mu  sync.Mutex
	evs []events.Pending
}

func (c *confirmed) Confirm(evs ...events.Pending) {
	c.mu.Lock()
	c.evs = append(c.evs, evs...)
	c.mu.Unlock()
	c.Outbox.Confirm(evs...)
}

func newService(t *testing.T) (*graph.Service, *confirmed) {
	t.Helper()
	db := testkit.Database(t, testkit.Backends(t), "graph")
	if err := mongox.EnsureIndexes(context.Background(), db, append(store.Indexes, events.OutboxIndexes...)); err != nil {
		t.Fatal(err)
	}
	ob := &confirmed{Outbox: events.NewOutbox(db, nil, testkit.Logger(t), events.OutboxOptions{})}
	lim, err := outbound.NewLimiter(outbound.LimiterOptions{Max: 4, Queue: 4, Wait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return &graph.Service{Limits: graph.DefaultLimits, Schedule: graph.Schedule{Interval: time.Hour, Scan: time.Minute},
		Store: store.New(db), Mailbox: mailbox{}, Outbox: ob, Limiter: lim, Log: testkit.Logger(t)}, ob
}

// page is a graph page of up to 200 items, the newest.
var page = graph.GraphPage{Limit: 200}

var (
	alice = &contract.Principal{ObjectID: "obj_a", Hash: "svc_a"}
	bob   = &contract.Principal{ObjectID: "obj_b", Hash: "svc_b"}
)

// TestMessagesProjectedInAnyOrder: whatever order the message.created events of a thread arrive
// in, and however often, whether they name the message they follow or not (earlier releases'),
// the graph ends with one message node per message and a replies_to edge from each message to
// the one before it, and the thread's messages are numbered from 1 with no gap, each message
// among them.
func TestMessagesProjectedInAnyOrder(t *testing.T) {
	t.Parallel()
	const n = 12
	start := clock.Now().Add(-time.Hour)
	events := func(named bool) []contract.MessageCreatedData {
		var msgs []contract.MessageCreatedData
		for i := range n {
			from, to := "obj_a", "obj_b"
			if i%2 == 1 {
				from, to = to, from
			}
			m := contract.MessageCreatedData{MessageID: fmt.Sprintf("msg_%02d", i), ThreadID: "thr_ab",
				FromObjectID: from, ToObjectID: to, FromHash: "svc_" + from[4:], Body: fmt.Sprintf("message %d", i),
				CreatedAt: clock.Format(start.Add(time.Duration(i) * time.Second))}
			if named && i > 0 {
				m.PrevMessageID = fmt.Sprintf("msg_%02d", i-1)
			}
			msgs = append(msgs, m)
		}
		return msgs
	}
	for round := range 6 {
		msgs := events(round%2 == 1)
		t.Run(fmt.Sprint("order ", round), func(t *testing.T) {
			t.Parallel()
			svc, _ := newService(t)
			order := slices.Clone(msgs)
			order = append(order, msgs[3], msgs[7]) // redelivered
			rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			var wg sync.WaitGroup
			for half := range 2 { // two partitions projecting at once, in batches of one to four
				wg.Go(func() {
					var mine []contract.MessageCreatedData
					for i := half; i < len(order); i += 2 {
						mine = append(mine, order[i])
					}
					for len(mine) > 0 {
						n := min(len(mine), 1+rand.IntN(4))
						if err := svc.ProjectMessages(context.Background(), mine[:n]); err != nil {
							t.Error(err)
						}
						mine = mine[n:]
					}
				})
			}
			wg.Wait()
			g, err := svc.Graph(context.Background(), bob, "thr_ab", page)
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Nodes) != n {
				t.Fatalf("%d nodes, want %d", len(g.Nodes), n)
			}
			var got []string
			for _, e := range g.Edges {
				got = append(got, e.From+">"+e.To)
			}
			var want []string
			for i := 1; i < n; i++ {
				want = append(want, graph.MessageNodeID(msgs[i].MessageID)+">"+graph.MessageNodeID(msgs[i-1].MessageID))
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("replies_to edges\n got %v\nwant %v", got, want)
			}
			count, err := svc.Store.MessageCount(context.Background(), "thr_ab")
			if err != nil {
				t.Fatal(err)
			}
			numbered, err := svc.Store.MessagesAround(context.Background(), "thr_ab", 1, count)
			if err != nil {
				t.Fatal(err)
			}
			listed := map[string]bool{}
			for i, m := range numbered {
				if m.Seq != int64(i+1) {
					t.Fatalf("the thread's messages skip from %d to %d", i, m.Seq)
				}
				listed[m.Value.NodeID] = true
			}
			if count < n || len(numbered) != int(count) || len(listed) != n {
				t.Errorf("the thread's messages number %d (%d read, %d distinct), want %d", count, len(numbered), len(listed), n)
			}
		})
	}
}

// TestReplyEdgesFollowTheEvent: a message whose event names the message it follows gets its
// replies_to edge to that one, whatever the creation times say (here the reply's clock is behind
// by a minute, and 40 messages lie between them in the msgs list); a message of an earlier
// release's event, which names none, is still chained to the one created before it among its
// neighbours.
func TestReplyEdgesFollowTheEvent(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	ctx := context.Background()
	start := clock.Now().Add(-time.Hour)
	msg := func(id, prev string, at time.Time) contract.MessageCreatedData {
		return contract.MessageCreatedData{MessageID: id, ThreadID: "thr_ab", FromObjectID: "obj_a", ToObjectID: "obj_b",
			FromHash: "svc_a", Body: "about " + id, CreatedAt: clock.Format(at), PrevMessageID: prev}
	}
	batch := []contract.MessageCreatedData{msg("msg_first", "", start), msg("msg_legacy", "", start.Add(time.Minute))}
	for i := range 40 { // another thread's worth of noise in between, as a late backlog would be
		batch = append(batch, msg(fmt.Sprintf("msg_mid%02d", i), "", start.Add(-time.Duration(i+2)*time.Hour)))
	}
	batch = append(batch, msg("msg_reply", "msg_first", start.Add(-time.Minute)))
	if err := svc.ProjectMessages(ctx, batch); err != nil {
		t.Fatal(err)
	}
	g, err := svc.Graph(ctx, alice, "thr_ab", page)
	if err != nil {
		t.Fatal(err)
	}
	edges := map[string]string{}
	for _, e := range g.Edges {
		edges[e.From] = e.To
	}
	reply, first := graph.MessageNodeID("msg_reply"), graph.MessageNodeID("msg_first")
	if edges[reply] != first {
		t.Errorf("the reply's edge goes to %q, want %q (the message its event names)", edges[reply], first)
	}
	if got := edges[graph.MessageNodeID("msg_legacy")]; got != first {
		t.Errorf("the legacy message's edge goes to %q, want %q (the message created before it)", got, first)
	}
}

// TestDecisionEventsReachBothParticipants: a decision confirms one decision.recorded per
// participant, recorded on the decision's node.
func TestDecisionEventsReachBothParticipants(t *testing.T) {
	t.Parallel()
	svc, ob := newService(t)
	ctx := context.Background()
	h, err := svc.AddNode(ctx, alice, "thr_ab", graph.NodeDraft{Type: "hypothesis", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := svc.Decide(ctx, "req_1", bob, "thr_ab", graph.DecisionDraft{Title: "t", Body: "b", Supersedes: []string{h.ID, h.ID}})
	if err != nil {
		t.Fatal(err)
	}
	var owners []string
	for _, ev := range ob.evs {
		if ev.Type != events.DecisionRecorded || ev.Topic != events.TopicGraph {
			t.Errorf("unexpected event %s on %s", ev.Type, ev.Topic)
		}
		owners = append(owners, ev.Key)
	}
	slices.Sort(owners)
	if !slices.Equal(owners, []string{"obj_a", "obj_b"}) {
		t.Errorf("decision.recorded went to %v, want both participants", owners)
	}
	stored, err := svc.Store.Node(ctx, d.ID)
	if err != nil || len(stored.Events) != 2 || !slices.Equal(stored.Supersedes, []string{h.ID}) {
		t.Errorf("stored decision %+v, %v: want both event ids and one superseded node", stored, err)
	}
}

// TestDecisionsAcceptedByWhoTookPart: a decision of the side that opened a thread is accepted
// for its own decision memory only, while the other side has not written into the thread; once
// it has (here a node), the next decision is accepted for both. Each event names the author.
func TestDecisionsAcceptedByWhoTookPart(t *testing.T) {
	t.Parallel()
	svc, ob := newService(t)
	ctx := context.Background()
	if err := svc.ProjectMessages(ctx, []contract.MessageCreatedData{{MessageID: "msg_open", ThreadID: "thr_ab",
		FromObjectID: "obj_a", ToObjectID: "obj_b", FromHash: "svc_a", Body: "hello", CreatedAt: clock.Format(clock.Now())}}); err != nil {
		t.Fatal(err)
	}
	accepted := func() map[string]bool {
		t.Helper()
		out := map[string]bool{}
		for _, ev := range ob.evs {
			var env struct {
				Data contract.DecisionRecordedData `json:"data"`
			}
			if err := json.Unmarshal([]byte(ev.Payload), &env); err != nil || env.Data.Accepted == nil || env.Data.AuthorHash != "svc_a" {
				t.Fatalf("decision.recorded %s: %+v %v", ev.Payload, env.Data, err)
			}
			out[ev.Key] = *env.Data.Accepted
		}
		ob.evs = nil
		return out
	}
	if _, err := svc.Decide(ctx, "req_1", alice, "thr_ab", graph.DecisionDraft{Title: "t", Body: "b"}); err != nil {
		t.Fatal(err)
	}
	if got := accepted(); !got["obj_a"] || got["obj_b"] || len(got) != 2 {
		t.Errorf("before bob wrote into the thread: accepted %v, want alice's only", got)
	}
	if _, err := svc.AddNode(ctx, bob, "thr_ab", graph.NodeDraft{Type: "question", Body: "why?"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Decide(ctx, "req_2", alice, "thr_ab", graph.DecisionDraft{Title: "t2", Body: "b2"}); err != nil {
		t.Fatal(err)
	}
	if got := accepted(); !got["obj_a"] || !got["obj_b"] {
		t.Errorf("after bob wrote into the thread: accepted %v, want both", got)
	}
}

// TestConcurrentGuidanceKeepsEveryVersion: concurrent writes of one owner's guidance each get a
// version of their own; none is lost.
func TestConcurrentGuidanceKeepsEveryVersion(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	const n = 6
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := svc.PutGuidance(context.Background(), alice, "thr_ab", fmt.Sprint("guidance ", i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	g, err := svc.Guidance(context.Background(), alice, "thr_ab", 0, 50, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.Version != n || len(g.Versions) != n {
		t.Errorf("guidance at version %d with %d versions, want %d", g.Version, len(g.Versions), n)
	}
	if _, err := svc.Guidance(context.Background(), bob, "thr_ab", 0, 50, nil); err == nil {
		t.Error("bob reads guidance he never wrote")
	}
}

// TestTwoDecisionsSupersedingOneNode: the earlier of two decisions superseding one node sets
// its invalid_at; both decisions' supersedes edges are shown; as of before the second, only the
// first's.
func TestTwoDecisionsSupersedingOneNode(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	ctx := context.Background()
	h, err := svc.AddNode(ctx, alice, "thr_ab", graph.NodeDraft{Type: "hypothesis", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := svc.Decide(ctx, "req_1", bob, "thr_ab", graph.DecisionDraft{Title: "t1", Body: "b1", Supersedes: []string{h.ID}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	between := clock.Now()
	time.Sleep(5 * time.Millisecond)
	later, err := svc.Decide(ctx, "req_2", alice, "thr_ab", graph.DecisionDraft{Title: "t2", Body: "b2", Supersedes: []string{h.ID}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		asOf *time.Time
		from []string
	}{{nil, []string{first.ID, later.ID}}, {&between, []string{first.ID}}} {
		pg := page
		pg.AsOf = c.asOf
		g, err := svc.Graph(ctx, alice, "thr_ab", pg)
		if err != nil {
			t.Fatal(err)
		}
		var node *graph.NodeView
		for i := range g.Nodes {
			if g.Nodes[i].ID == h.ID {
				node = &g.Nodes[i]
			}
		}
		if node == nil || node.InvalidatedBy == nil || *node.InvalidatedBy != first.ID {
			t.Errorf("as of %v: superseded node %+v, want it invalidated by the earlier decision", c.asOf, node)
		}
		var from []string
		for _, e := range g.Edges {
			if e.Type == graph.EdgeSupersedes && e.To == h.ID {
				from = append(from, e.From)
			}
		}
		if !slices.Equal(from, c.from) {
			t.Errorf("as of %v: supersedes edges from %v, want %v", c.asOf, from, c.from)
		}
	}
}

// pages answers every fetch with the same text and counts the fetches.
type pages struct{ gets atomic.Int64 }

func (*pages) CheckURL(raw string) (*url.URL, error) { return url.Parse(raw) }

func (p *pages) Get(context.Context, string) (*outbound.Response, error) {
	p.gets.Add(1)
	return &outbound.Response{Status: 200, ContentType: "text/plain", Body: []byte("the page")}, nil
}

// TestRepullCostsWhatIsDue: a scan pulls the sources listed in the due buckets that ended since
// the last scan, each once, and leaves the sources not yet due alone; a second scan pulls nothing.
func TestRepullCostsWhatIsDue(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	p := &pages{}
	svc.Fetcher = p
	ctx := context.Background()
	now := clock.Now()
	for i, due := range []time.Time{now.Add(-10 * time.Minute), now.Add(-5 * time.Minute), now.Add(time.Hour)} {
		src := &store.Source{ID: fmt.Sprint("src_", i), ThreadID: "thr_ab", OwnerID: "obj_a", OwnerHash: "svc_a", Kind: "url",
			URL: "https://example.com/", FetchURL: "https://example.com/", Visibility: graph.Participants, CreatedAt: now}
		if err := svc.Store.InsertSource(ctx, src); err != nil {
			t.Fatal(err)
		}
		if err := svc.Store.AppendDue(ctx, store.DueBucket(due, svc.Schedule.Scan), store.Due{SourceID: src.ID, At: due}); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.RepullDue(ctx); err != nil {
		t.Fatal(err)
	}
	if n := p.gets.Load(); n != 2 {
		t.Fatalf("%d pulls, want the two sources due pulled once each", n)
	}
	if err := svc.RepullDue(ctx); err != nil {
		t.Fatal(err)
	}
	if n := p.gets.Load(); n != 2 {
		t.Fatalf("a second scan pulled again: %d pulls", n)
	}
}

// together is a fetcher whose gets all wait until n of them have started: the pulls that make
// them race past their reads of the source's last pull.
type together struct {
	n       int
	mu      sync.Mutex
	started int
	all     chan struct{}
}

func (*together) CheckURL(raw string) (*url.URL, error) { return url.Parse(raw) }

func (f *together) Get(ctx context.Context, _ string) (*outbound.Response, error) {
	f.mu.Lock()
	if f.started++; f.started == f.n {
		close(f.all)
	}
	f.mu.Unlock()
	select {
	case <-f.all:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &outbound.Response{Status: 200, ContentType: "text/plain", Body: []byte("the same page")}, nil
}

// TestRacingPullsOfOneChangeRecordItOnce: an owner's pulls and the schedule's, reading the same
// new text at once, store one evidence node and report one context_source event.
func TestRacingPullsOfOneChangeRecordItOnce(t *testing.T) {
	t.Parallel()
	svc, ob := newService(t)
	const racers = 3
	svc.Fetcher = &together{n: racers, all: make(chan struct{})}
	ctx := context.Background()
	src := &store.Source{ID: "src_race", ThreadID: "thr_ab", OwnerID: "obj_a", OwnerHash: "svc_a", Kind: "url",
		URL: "https://example.com/", FetchURL: "https://example.com/", Visibility: graph.Participants,
		CreatedAt: clock.Now().Add(-2 * time.Hour)}
	if err := svc.Store.InsertSource(ctx, src); err != nil {
		t.Fatal(err)
	}
	due := clock.Now().Add(-5 * time.Minute)
	if err := svc.Store.AppendDue(ctx, store.DueBucket(due, svc.Schedule.Scan), store.Due{SourceID: src.ID, At: due}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			var err error
			if i == 0 {
				err = svc.RepullDue(ctx)
			} else {
				_, err = svc.PullNow(ctx, fmt.Sprintf("req_%d", i), alice, "thr_ab", src.ID)
			}
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	g, err := svc.Graph(ctx, alice, "thr_ab", page)
	if err != nil {
		t.Fatal(err)
	}
	var evidence []string
	for _, n := range g.Nodes {
		if n.SourceID != nil && *n.SourceID == src.ID {
			evidence = append(evidence, n.ID)
		}
	}
	if len(evidence) != 1 {
		t.Errorf("%d evidence nodes for one change of the source, want 1: %v", len(evidence), evidence)
	}
	ob.mu.Lock()
	defer ob.mu.Unlock()
	ids := map[string]bool{}
	for _, ev := range ob.evs {
		if ev.Type == events.ContextSourceChanged {
			ids[ev.ID] = true
		}
	}
	if len(ids) != 1 {
		t.Errorf("%d distinct context_source events for one change, want 1", len(ids))
	}
}
