package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// newStore returns a store over a database of the test's own, and the outbox of that database
// (never run: the tests read what it staged).
func newStore(t *testing.T) (*store.Store, *events.Outbox) {
	t.Helper()
	st, outbox, _ := newStoreDB(t)
	return st, outbox
}

func newStoreDB(t *testing.T) (*store.Store, *events.Outbox, *mongo.Database) {
	t.Helper()
	db := testkit.Database(t, testkit.Backends(t), "context")
	return store.New(db, testkit.Logger(t)), events.NewOutbox(db, nil, testkit.Logger(t), events.OutboxOptions{}), db
}

func materialise(t *testing.T, st *store.Store, objectID string) *store.Profile {
	t.Helper()
	p, err := st.Materialise(context.Background(), contract.Object{ObjectID: objectID, InitialLLMTxt: "# Ada\n"})
	if err != nil {
		t.Fatalf("materialise %s: %v", objectID, err)
	}
	return p
}

func TestMaterialiseIsIdempotent(t *testing.T) {
	t.Parallel()
	st, outbox := newStore(t)
	ctx := context.Background()
	if _, err := st.Profile(ctx, "obj_a"); !errors.Is(err, mongox.ErrNotFound) {
		t.Fatalf("profile before materialising: got %v, want ErrNotFound", err)
	}
	first := materialise(t, st, "obj_a")
	if first.Version != 1 || first.Title != "Ada" || first.Change != store.ChangeCreated {
		t.Fatalf("first version: got %+v, want version 1 titled Ada", first)
	}
	if _, _, err := st.Write(ctx, "obj_a", store.Edit{Change: store.ChangeLLMTxt, At: clock.Now(), Outbox: outbox,
		Apply: func(p *store.Profile) error { p.LLMTxt = "# Grace\n"; return nil }}); err != nil {
		t.Fatal(err)
	}
	again := materialise(t, st, "obj_a") // a late object.created changes nothing
	if again.Version != 2 || again.LLMTxt != "# Grace\n" {
		t.Fatalf("after a late materialise: got version %d %q, want version 2 with the written text", again.Version, again.LLMTxt)
	}
}

func TestConcurrentWritesEachGetTheirOwnVersion(t *testing.T) {
	t.Parallel()
	st, outbox := newStore(t)
	materialise(t, st, "obj_w")
	const writers = 12
	got := make([]int, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			p, _, err := st.Write(context.Background(), "obj_w", store.Edit{Change: store.ChangeLLMTxt, At: clock.Now(), Outbox: outbox,
				Apply: func(p *store.Profile) error { p.LLMTxt += "x"; return nil }})
			if err != nil {
				t.Errorf("writer %d: %v", i, err)
				return
			}
			got[i] = p.Version
		})
	}
	wg.Wait()
	slices.Sort(got)
	for i, v := range got {
		if v != i+2 {
			t.Fatalf("versions of concurrent writes: got %v, want each of 2..%d once", got, writers+1)
		}
	}
	p, err := st.Profile(context.Background(), "obj_w")
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != writers+1 || strings.Count(p.LLMTxt, "x") != writers {
		t.Fatalf("current profile: got version %d text %q, want every write applied", p.Version, p.LLMTxt)
	}
}

func TestWriteErrorLeavesNoVersion(t *testing.T) {
	t.Parallel()
	st, outbox := newStore(t)
	materialise(t, st, "obj_e")
	refused := errors.New("refused")
	_, _, err := st.Write(context.Background(), "obj_e", store.Edit{Change: store.ChangeRules, At: clock.Now(), Outbox: outbox,
		Apply: func(*store.Profile) error { return refused }})
	if !errors.Is(err, refused) {
		t.Fatalf("write: got %v, want the edit's error", err)
	}
	if _, err := st.VersionOf(context.Background(), "obj_e", 2); !errors.Is(err, mongox.ErrNotFound) {
		t.Fatalf("version 2 after a refused edit: got %v, want ErrNotFound", err)
	}
}

func TestSourcesByIDKeepsOrderAndOwner(t *testing.T) {
	t.Parallel()
	st, outbox := newStore(t)
	ctx := context.Background()
	for _, s := range []store.Source{
		{ID: "src_1", ObjectID: "obj_s", Kind: "text", Text: "one"},
		{ID: "src_2", ObjectID: "obj_s", Kind: "text", Text: "two"},
		{ID: "src_3", ObjectID: "obj_other", Kind: "text", Text: "three"},
	} {
		if err := st.InsertSource(ctx, &s, 10, outbox); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.SourcesByID(ctx, "obj_s", []string{"src_2", "src_3", "src_1", "src_none"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range got {
		ids = append(ids, s.ID)
	}
	if !slices.Equal(ids, []string{"src_2", "src_1"}) {
		t.Fatalf("sources by id: got %v, want [src_2 src_1] (another object's source left out)", ids)
	}
}

func TestRecordSyncKeepsAChangedConfiguration(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	old := &store.SyncConfig{ObjectID: "obj_y", RepoURL: "https://git.example/a", Branch: "main", FilePath: "llm.txt"}
	if err := st.SetSync(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := st.SetSync(ctx, &store.SyncConfig{ObjectID: "obj_y", RepoURL: "https://git.example/b", Branch: "main", FilePath: "llm.txt"}); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordSync(ctx, old, "abc", time.Now()); err != nil {
		t.Fatal(err)
	}
	cfg, err := st.Sync(ctx, "obj_y")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RepoURL != "https://git.example/b" || cfg.LastCommit != "" {
		t.Fatalf("sync after a pull of the old configuration: got %+v, want repository b without a commit", cfg)
	}
}
