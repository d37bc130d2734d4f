package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// Lists is the collection of every list graph-svc reads in pages (DESIGN §10): each document is
// keyed by the data its list is read in, _id = <scope>|<sort key>|<id>, so that a page is one
// find of an _id range and an append one insert. Scopes, by their first part:
//
//   - g|<thread>: the thread's graph, nodes and edges by creation time (a message node by its
//     message's), newest first;
//   - s|<thread>: the thread's tracked sources by creation time; u|<source>: the source's
//     state after each pull, by pull time; d|<bucket>: the sources due in a time bucket;
//     r: the buckets fully re-pulled;
//   - t|<object>: the threads an object takes part in, by creation time;
//   - numbered lists, whose position is a number the service shows or counts (a guidance
//     version, a quota slot, a decision count, a message's place in its thread): m|<thread>
//     (messages in the order projected), q|<quota>, c|<object> (decisions), v|<thread>|<object>
//     (guidance versions). Position n is claimed by inserting <scope>|<n>, so concurrent
//     writers never share one and a count is a read of the list's last (one range read, limit
//     1). The position tried is the one after that last, read first; a message's is the one
//     after its previous message's, which its node records (see AppendMessages): no read.
const Lists = "lists"

// listDoc is one document of a list.
type listDoc[T any] struct {
	ID string    `bson:"_id"`
	At time.Time `bson:"at"`
	V  T         `bson:"v"`
}

// Item is an element of a list read in pages: its value and its _id, the cursor of a page that
// ends with it.
type Item[T any] struct {
	Key   string
	At    time.Time
	Value T
}

// Numbered is an element of a numbered list: its position and its value.
type Numbered[T any] struct {
	Seq   int64
	At    time.Time
	Value T
}

// put inserts v under id; an existing document with that _id (a redelivery) is left as it is.
func (s *Store) put(ctx context.Context, id string, at time.Time, v any) error {
	if err := mongox.InsertOnce(ctx, s.c(Lists), listDoc[any]{ID: id, At: at, V: v}); err != nil {
		return fmt.Errorf("store lists: %w", err)
	}
	return nil
}

// page reads a range of a list in one find.
func page[T any](ctx context.Context, s *Store, r mongox.Range) ([]Item[T], error) {
	docs, err := mongox.Find[listDoc[T]](ctx, s.c(Lists), r)
	if err != nil {
		return nil, fmt.Errorf("store lists: %w", err)
	}
	out := make([]Item[T], len(docs))
	for i, d := range docs {
		out[i] = Item[T]{Key: d.ID, At: d.At, Value: d.V}
	}
	return out, nil
}

// newest reads a list's newest pages in one find: up to limit items before the key before (""
// from the newest), and the key the next page reads before ("" on the last: the find asks for
// one item more, to know).
func newest[T any](ctx context.Context, s *Store, scope, before string, limit int) ([]Item[T], string, error) {
	items, err := page[T](ctx, s, mongox.Range{Scope: scope, Before: before, Desc: true, Limit: limit + 1})
	if err != nil || len(items) <= limit {
		return items, "", err
	}
	return items[:limit], items[limit-1].Key, nil
}

// numberedPage reads a range of a numbered list (r.Scope) in one find.
func numberedPage[T any](ctx context.Context, s *Store, r mongox.Range) ([]Numbered[T], error) {
	items, err := page[T](ctx, s, r)
	if err != nil {
		return nil, err
	}
	out := make([]Numbered[T], len(items))
	for i, it := range items {
		n, err := mongox.ParseSeq(it.Key[len(r.Scope):])
		if err != nil {
			return nil, fmt.Errorf("store lists: %w", err)
		}
		out[i] = Numbered[T]{Seq: n, At: it.At, Value: it.Value}
	}
	return out, nil
}

// lastOf reads the last element of a numbered list (position 0 when it is empty): one range read.
func lastOf[T any](ctx context.Context, s *Store, scope string) (Numbered[T], error) {
	items, err := numberedPage[T](ctx, s, mongox.Range{Scope: scope, Desc: true, Limit: 1})
	if err != nil || len(items) == 0 {
		return Numbered[T]{}, err
	}
	return items[0], nil
}

// appendNumbered appends v at the position after the list's last and returns it; a position
// another writer took meanwhile makes it try the next.
func appendNumbered[T any](ctx context.Context, s *Store, scope string, at time.Time, v T) (int64, error) {
	last, err := lastOf[T](ctx, s, scope)
	if err != nil {
		return 0, err
	}
	for n := last.Seq + 1; ; n++ {
		err := mongox.Insert(ctx, s.c(Lists), listDoc[T]{ID: scope + mongox.Seq(n), At: at, V: v})
		if errors.Is(err, mongox.ErrTaken) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("store lists: %w", err)
		}
		return n, nil
	}
}

// pageNumbered reads up to limit elements of a numbered list below position before (0: from
// the last), newest first, in one find, and the position the next page reads below (0 on the
// last page).
func pageNumbered[T any](ctx context.Context, s *Store, scope string, before int64, limit int) ([]Numbered[T], int64, error) {
	r := mongox.Range{Scope: scope, Desc: true, Limit: limit}
	if before > 0 {
		r.Before = scope + mongox.Seq(before)
	}
	out, err := numberedPage[T](ctx, s, r)
	if err != nil {
		return nil, 0, err
	}
	var next int64
	if len(out) == limit && len(out) > 0 && out[len(out)-1].Seq > 1 {
		next = out[len(out)-1].Seq
	}
	return out, next, nil
}

// GraphItem is an element of a thread's graph: a node or an edge.
type GraphItem struct {
	Node *Node `bson:"node,omitempty"`
	Edge *Edge `bson:"edge,omitempty"`
	// MsgSeq is a message node's position in the thread's messages (see AppendMessage).
	MsgSeq int64 `bson:"msg_seq,omitempty"`
}

// GraphScope is the range of a thread's graph.
func GraphScope(threadID string) string { return mongox.Scope("g", keyText(threadID)) }

// GraphKey is the _id of an item of a thread's graph made at a time.
func GraphKey(threadID string, at time.Time, itemID string) string {
	return GraphScope(threadID) + mongox.Key(mongox.Time(at), keyText(itemID))
}

// AppendGraph adds a node or an edge to its thread's graph, at its creation time: a blind
// insert, which a redelivered message leaves as it was.
func (s *Store) AppendGraph(ctx context.Context, threadID string, it GraphItem) error {
	return s.AppendGraphItems(ctx, threadID, []GraphItem{it})
}

// AppendGraphItems adds nodes and edges of one thread to its graph in one insert; those there
// already (a redelivery) are left as they are.
func (s *Store) AppendGraphItems(ctx context.Context, threadID string, items []GraphItem) error {
	docs := make([]listDoc[GraphItem], len(items))
	for i, it := range items {
		d, err := graphDoc(threadID, it)
		if err != nil {
			return err
		}
		docs[i] = d
	}
	if _, err := mongox.InsertNew(ctx, s.c(Lists), docs); err != nil {
		return fmt.Errorf("store lists: %w", err)
	}
	return nil
}

// graphDoc is the document of a node or an edge in its thread's graph.
func graphDoc(threadID string, it GraphItem) (listDoc[GraphItem], error) {
	switch {
	case it.Node != nil:
		return listDoc[GraphItem]{ID: GraphKey(threadID, it.Node.CreatedAt, it.Node.ID), At: it.Node.CreatedAt, V: it}, nil
	case it.Edge != nil:
		return listDoc[GraphItem]{ID: GraphKey(threadID, it.Edge.CreatedAt, it.Edge.ID), At: it.Edge.CreatedAt, V: it}, nil
	}
	return listDoc[GraphItem]{}, errors.New("store lists: a graph item is a node or an edge")
}

// GraphPage reads up to limit items of a thread's graph, newest first, before the key before
// ("" from the newest) and made before until when it is set: one find. It returns the key the
// next page reads before ("" on the last).
func (s *Store) GraphPage(ctx context.Context, threadID, before string, until *time.Time, limit int) ([]Item[GraphItem], string, error) {
	scope := GraphScope(threadID)
	if before == "" && until != nil {
		before = scope + mongox.Time(until.Add(time.Microsecond))
	}
	return newest[GraphItem](ctx, s, scope, before, limit)
}

// MessageRef is an element of a thread's messages.
type MessageRef struct {
	NodeID    string    `bson:"node_id"`
	CreatedAt time.Time `bson:"created_at"`
}

func messagesScope(threadID string) string { return mongox.Scope("m", keyText(threadID)) }

// AppendMessage numbers a message node in its thread's messages, in the order projected.
func (s *Store) AppendMessage(ctx context.Context, threadID string, m MessageRef) (int64, error) {
	return appendNumbered(ctx, s, messagesScope(threadID), m.CreatedAt, m)
}

// ThreadMessages are message nodes of one thread to number in its messages, in the order given,
// and to add to the thread's graph (Nodes[i] is the node of Refs[i]). They take the positions
// from From on: the one after the thread's last message, which the caller knows when the first
// follows a message whose position it read with the batch's nodes (a thread's first message
// takes 1); From 0 asks for the list's last, one range read. A thread given as Listed (one
// RecordThreads recorded, or may have) is listed in its participants' thread lists with them.
type ThreadMessages struct {
	ThreadID string
	Refs     []MessageRef
	From     int64
	Nodes    []*Node
	Listed   *Thread
}

// AppendMessages numbers the message nodes of several threads in their threads' messages and
// adds them to their graphs (see ThreadMessages), the threads' list entries with them, all in
// one insert (a range read first for each thread whose From is 0): a batch costs one command
// whatever number of threads it touches. A position another writer took (messages of one thread
// are projected out of order, each keyed by its recipient) leaves its message for one after the
// list's last, its graph entry rewritten with it: the list stays dense and numbered in the order
// projected. Entries there already (a redelivery) are left as they are. It returns the positions
// taken, per thread.
func (s *Store) AppendMessages(ctx context.Context, batch []ThreadMessages) ([][]int64, error) {
	seqs := make([][]int64, len(batch))
	graph := make([][]listDoc[GraphItem], len(batch))
	type slot struct{ thread, msg int }
	var docs []any
	var slots []slot // docs[i] numbers batch[slots[i].thread].Refs[slots[i].msg]; the rest are not numbered
	for t, tm := range batch {
		from := tm.From
		if from <= 0 && len(tm.Refs) > 0 {
			last, err := lastOf[MessageRef](ctx, s, messagesScope(tm.ThreadID))
			if err != nil {
				return nil, err
			}
			from = last.Seq + 1
		}
		scope := messagesScope(tm.ThreadID)
		seqs[t] = make([]int64, len(tm.Refs))
		for i, m := range tm.Refs {
			seqs[t][i] = from + int64(i)
			docs = append(docs, listDoc[MessageRef]{ID: scope + mongox.Seq(seqs[t][i]), At: m.CreatedAt, V: m})
			slots = append(slots, slot{t, i})
		}
		graph[t] = make([]listDoc[GraphItem], len(tm.Nodes))
		for i, n := range tm.Nodes {
			d, err := graphDoc(tm.ThreadID, GraphItem{Node: n, MsgSeq: seqs[t][i]})
			if err != nil {
				return nil, err
			}
			graph[t][i] = d
		}
	}
	for t, tm := range batch {
		for _, d := range graph[t] {
			docs = append(docs, d)
		}
		if tm.Listed != nil {
			for _, e := range threadEntries(*tm.Listed) {
				docs = append(docs, e)
			}
		}
	}
	got, err := mongox.InsertNewInBatches(ctx, s.c(Lists), docs, listsBatch)
	if err != nil {
		return nil, fmt.Errorf("store lists: %w", err)
	}
	for at, sl := range slots { // the numbered documents come first
		if !got[at] {
			if err := s.renumber(ctx, batch[sl.thread], sl.msg, seqs[sl.thread], graph[sl.thread]); err != nil {
				return nil, err
			}
		}
	}
	return seqs, nil
}

// renumber gives message i of tm, whose position another writer took, the one after the list's
// last, and rewrites its graph entry with it.
func (s *Store) renumber(ctx context.Context, tm ThreadMessages, i int, seqs []int64, graph []listDoc[GraphItem]) error {
	var err error
	if seqs[i], err = s.AppendMessage(ctx, tm.ThreadID, tm.Refs[i]); err != nil {
		return err
	}
	if i < len(graph) {
		graph[i].V.MsgSeq = seqs[i]
		if err := mongox.ReplaceUpsert(ctx, s.c(Lists), graph[i].ID, graph[i]); err != nil {
			return fmt.Errorf("store lists: %w", err)
		}
	}
	return nil
}

// listsBatch bounds the documents of one insert into the lists, as memoryBatch does the index's.
const listsBatch = 1000

// MessageCount is how many message nodes a thread's messages number.
func (s *Store) MessageCount(ctx context.Context, threadID string) (int64, error) {
	last, err := lastOf[MessageRef](ctx, s, messagesScope(threadID))
	return last.Seq, err
}

// MessagesAround reads a thread's messages numbered from first to last: one find.
func (s *Store) MessagesAround(ctx context.Context, threadID string, first, last int64) ([]Numbered[MessageRef], error) {
	scope, first := messagesScope(threadID), max(first, 1)
	if last < first {
		return nil, nil
	}
	return numberedPage[MessageRef](ctx, s, mongox.Range{Scope: scope, After: scope + mongox.Seq(first-1),
		Before: scope + mongox.Seq(last+1), Limit: int(last - first + 1)})
}

func quotaScope(list string) string { return mongox.Scope("q", keyText(list)) }

// Reserve takes one of the max slots of a quota list: slots are positions claimed by inserts, so
// concurrent writers never take more than max between them (no count then insert). A full list
// is refused with the read of its last slot only; a writer that loses the race for the last
// slot takes a position past max, which refuses it as well.
func (s *Store) Reserve(ctx context.Context, list string, max int64, key string) (bool, error) {
	used, err := s.QuotaUsed(ctx, list)
	if err != nil || used >= max {
		return false, err
	}
	n, err := appendNumbered(ctx, s, quotaScope(list), time.Now(), key)
	if err != nil {
		return false, err
	}
	return n <= max, nil
}

// QuotaUsed is how many slots of a quota list were taken (refused attempts past max included).
func (s *Store) QuotaUsed(ctx context.Context, list string) (int64, error) {
	last, err := lastOf[string](ctx, s, quotaScope(list))
	return last.Seq, err
}

// DecisionRef names a decision recorded in one of an object's threads.
type DecisionRef struct {
	NodeID    string    `bson:"node_id"`
	ThreadID  string    `bson:"thread_id"`
	Title     string    `bson:"title"`
	CreatedAt time.Time `bson:"created_at"`
}

func decisionsScope(objectID string) string { return mongox.Scope("c", keyText(objectID)) }

// AppendDecision numbers a decision among an object's decisions.
func (s *Store) AppendDecision(ctx context.Context, objectID string, d DecisionRef) error {
	_, err := appendNumbered(ctx, s, decisionsScope(objectID), d.CreatedAt, d)
	return err
}

// Decisions is how many decisions an object's threads recorded, and the latest (nil before the
// first): one range read.
func (s *Store) Decisions(ctx context.Context, objectID string) (int64, *DecisionRef, error) {
	last, err := lastOf[DecisionRef](ctx, s, decisionsScope(objectID))
	if err != nil || last.Seq == 0 {
		return 0, nil, err
	}
	return last.Seq, &last.Value, nil
}
