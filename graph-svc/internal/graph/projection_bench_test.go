package graph_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// newThreadBatches are batches of first messages of new threads between 16 objects, as a
// consumer's partitions hand them in under load (every send a new thread): callers batches each
// of size messages, from caller c's partition.
func newThreadBatches(prefix string, callers, batches, size int) [][][]contract.MessageCreatedData {
	out := make([][][]contract.MessageCreatedData, callers)
	k := 0
	for c := range callers {
		for b := range batches {
			var msgs []contract.MessageCreatedData
			for i := range size {
				k++
				from, to := fmt.Sprintf("obj_%d", k%8), fmt.Sprintf("obj_%d", 8+k%8)
				id := fmt.Sprintf("%s_%d_%d_%d", prefix, c, b, i)
				msgs = append(msgs, contract.MessageCreatedData{MessageID: "msg_" + id, ThreadID: "thr_" + id,
					FromObjectID: from, ToObjectID: to, FromHash: "svc_" + from, ToHash: "svc_" + to, Body: "fresh",
					CreatedAt: clock.Format(clock.Now())})
			}
			out[c] = append(out[c], msgs)
		}
	}
	return out
}

// projectConcurrently hands each caller's batches to ProjectMessages in order, the callers at once.
func projectConcurrently(tb testing.TB, svc *graph.Service, batches [][][]contract.MessageCreatedData) {
	tb.Helper()
	var wg sync.WaitGroup
	for _, mine := range batches {
		wg.Go(func() {
			for _, msgs := range mine {
				if err := svc.ProjectMessages(context.Background(), msgs); err != nil {
					tb.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestConcurrentBatchesAreAllProjected: batches handed in at once by several callers (the
// consumer's partitions) are projected, together or not, each message once in its thread.
func TestConcurrentBatchesAreAllProjected(t *testing.T) {
	t.Parallel()
	svc := monitoredService(t, "together", func(context.Context, *event.CommandStartedEvent) {})
	batches := newThreadBatches("tg", 4, 5, 3)
	projectConcurrently(t, svc, batches)
	projectConcurrently(t, svc, batches) // redelivered: nothing new
	for _, mine := range batches {
		for _, msgs := range mine {
			for _, m := range msgs {
				refs, err := svc.Store.MessagesAround(context.Background(), m.ThreadID, 1, 5)
				if err != nil || len(refs) != 1 || refs[0].Value.NodeID != graph.MessageNodeID(m.MessageID) {
					t.Errorf("%s numbers %v (%v), want its one message", m.ThreadID, refs, err)
				}
			}
		}
	}
}

// BenchmarkProjectionUnderLoad prints how many new threads' messages a second the projection
// takes (msgs/s) when one caller hands in batches of one or ten, and when four callers (four
// partitions) hand in batches of one at once: those are projected together.
func BenchmarkProjectionUnderLoad(b *testing.B) {
	for _, c := range []struct{ callers, size int }{{1, 1}, {1, 10}, {4, 1}} {
		b.Run(fmt.Sprintf("callers=%d/batch=%d", c.callers, c.size), func(b *testing.B) {
			svc := monitoredService(b, fmt.Sprintf("load%d%d", c.callers, c.size), func(context.Context, *event.CommandStartedEvent) {})
			batches := newThreadBatches("ld", c.callers, 40/c.callers, c.size)
			start := time.Now()
			projectConcurrently(b, svc, batches)
			b.ReportMetric(float64(40*c.size)/time.Since(start).Seconds(), "msgs/s")
		})
	}
}

// benchBody is deploy/benchstack's message body: a typical agent note of about 0.5 KiB.
const benchBody = "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore " +
	"et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip " +
	"ex ea commodo consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu " +
	"fugiat nulla pariatur. Excepteur sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt " +
	"mollit anim id est laborum. Sed ut perspiciatis unde omnis iste natus error sit voluptatem accusantium."

// BenchmarkMessageIndexBytes projects messages of benchstack's 0.5 KiB body (new threads between
// 16 objects, 100 an iteration in batches of 10) and prints how fast (msgs/s) and what the
// memory index then holds: its postings per message, the BSON bytes of a posting, and the
// index's bytes per message (postings and the nodes' scored stems; the objects' stats aside).
// The bytes are the documents as the driver reads them back, before the backend's own overhead.
// It prints the process's CPU time per message too (driver, FerretDB and SQLite alike), which
// other work on the machine moves less than it moves msgs/s.
func BenchmarkMessageIndexBytes(b *testing.B) {
	const perLoop, size = 100, 10
	db := testkit.Database(b, testkit.Backends(b), "bytes")
	svc := serviceOn(b, db)
	messages, loop := 0, 0
	var took, cpu time.Duration
	for b.Loop() {
		loop++
		var batches [][]contract.MessageCreatedData
		for k := range perLoop {
			if k%size == 0 {
				batches = append(batches, nil)
			}
			from, to := fmt.Sprintf("obj_%d", k%8), fmt.Sprintf("obj_%d", 8+k%8)
			id := fmt.Sprintf("by_%d_%d", loop, k)
			batches[len(batches)-1] = append(batches[len(batches)-1], contract.MessageCreatedData{MessageID: "msg_" + id,
				ThreadID: "thr_" + id, FromObjectID: from, ToObjectID: to, FromHash: "svc_" + from, ToHash: "svc_" + to,
				Body: benchBody, CreatedAt: clock.Format(clock.Now())})
		}
		start, cpu0 := time.Now(), processCPU(b)
		projectConcurrently(b, svc, [][][]contract.MessageCreatedData{batches})
		took, cpu = took+time.Since(start), cpu+processCPU(b)-cpu0
		messages += perLoop
	}
	b.StopTimer()
	docs, err := mongox.FindAll[bson.Raw](context.Background(), db.Collection(store.MemoryPostings), bson.D{})
	if err != nil {
		b.Fatal(err)
	}
	var postings, postingBytes, indexBytes int
	for _, d := range docs {
		id, _ := d.Lookup("_id").StringValueOK()
		switch {
		case strings.HasPrefix(id, "p|"):
			postings++
			postingBytes += len(d)
			indexBytes += len(d)
		case !strings.HasPrefix(id, "n|"):
			indexBytes += len(d)
		}
	}
	b.ReportMetric(float64(messages)/took.Seconds(), "msgs/s")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(messages), "cpu-ms/msg")
	b.ReportMetric(float64(postings)/float64(messages), "postings/msg")
	b.ReportMetric(float64(postingBytes)/float64(max(postings, 1)), "B/posting")
	b.ReportMetric(float64(indexBytes)/float64(messages), "B/msg")
}

// processCPU is the CPU time the process has used so far (user and system).
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
