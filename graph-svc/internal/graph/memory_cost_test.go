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
// message and a 64 KiB one of thousands of distinct words, and its memory index work is at most
// three commands per participant: one insert (the entry and its new presence marks) and one
// move of the head hint, plus one read of the hint by a process that does not remember the
// object's position (a restart, here a new service).
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
		cmds.total(short), cmds.total(large), short[store.MemoryIndex], large[store.MemoryIndex])
	t.Logf("store commands after a restart: %d for 14 bytes, %d for 64 KiB; memory index: %d and %d",
		cmds.total(coldShort), cmds.total(coldLarge), coldShort[store.MemoryIndex], coldLarge[store.MemoryIndex])
	if cmds.total(short) != cmds.total(large) || short[store.MemoryIndex] != large[store.MemoryIndex] {
		t.Errorf("a 64 KiB message cost %v, a short one %v", large, short)
	}
	if coldShort[store.MemoryIndex] != coldLarge[store.MemoryIndex] || cmds.total(coldShort) != cmds.total(coldLarge) {
		t.Errorf("after a restart a 64 KiB message cost %v, a short one %v", coldLarge, coldShort)
	}
	if short[store.MemoryIndex] > 2*2 || coldShort[store.MemoryIndex] > 2*3 {
		t.Errorf("memory index commands: %d warm, %d cold for two participants; want at most 2 and 3 each",
			short[store.MemoryIndex], coldShort[store.MemoryIndex])
	}
}
