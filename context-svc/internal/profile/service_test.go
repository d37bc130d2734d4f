package profile_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/context-svc/internal/profile"
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/outbound"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// identitySvc stands in for identity-svc's internal API: it knows some objects and records the
// versions reported to it; failReports makes the next reports fail.
type identitySvc struct {
	mu          sync.Mutex
	objects     map[string]contract.Object
	reports     []contract.ProfileUpdate
	failReports int
}

func (f *identitySvc) Object(_ context.Context, objectID string) (*contract.Object, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	obj, ok := f.objects[objectID]
	if !ok {
		return nil, identity.ErrNotFound
	}
	return &obj, nil
}

func (f *identitySvc) ReportProfile(_ context.Context, _ string, u contract.ProfileUpdate) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failReports > 0 {
		f.failReports--
		return errors.New("identity-svc unavailable")
	}
	f.reports = append(f.reports, u)
	return nil
}

func (f *identitySvc) lastReport() contract.ProfileUpdate {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reports) == 0 {
		return contract.ProfileUpdate{}
	}
	return f.reports[len(f.reports)-1]
}

// validators stands in for the ETags of public reads, which live in Redis.
type validators struct{ changed atomic.Int32 }

func (v *validators) Changed(context.Context, string) { v.changed.Add(1) }

type fixture struct {
	svc *profile.Service
	db  *mongo.Database
	id  *identitySvc
	t   profile.Target
}

// newFixture runs the use cases on the real store in a database of the test's own, with one
// object (obj_a) known to identity-svc and not yet materialised.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	db := testkit.Database(t, testkit.Backends(t), "context")
	id := &identitySvc{objects: map[string]contract.Object{
		"obj_a": {ObjectID: "obj_a", Hash: "svc_a", Version: 1, InitialLLMTxt: "# Ada\n"},
	}}
	fetcher, err := outbound.New(outbound.Options{AllowPrivate: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	log := testkit.Logger(t)
	svc := &profile.Service{
		Store: store.New(db, log), Outbox: events.NewOutbox(db, nil, log, events.OutboxOptions{}), Identity: id, Fetcher: fetcher,
		SourceRefresh: time.Hour, Log: log, ETags: &validators{},
	}
	return &fixture{svc: svc, db: db, id: id, t: profile.Target{ObjectID: "obj_a", Hash: "svc_a", RequestID: "req_test"}}
}

// stagedEvent is an event staged in the outbox, as the relay will publish it.
type stagedEvent struct {
	ID        string `bson:"_id"`
	Type      string `bson:"type"`
	Key       string `bson:"key"`
	RequestID string `bson:"request_id"`
	Payload   string `bson:"payload"`
}

// outbox returns the events a document's write staged and recorded, in order: those the outbox
// publishes for it.
func (f *fixture) outbox(t *testing.T, collection, id string) []stagedEvent {
	t.Helper()
	ctx := context.Background()
	var doc struct {
		Events []string `bson:"_events"`
	}
	if err := mongox.FindOne(ctx, f.db.Collection(collection), mongox.ByID(id), &doc); err != nil {
		t.Fatalf("read %s %s: %v", collection, id, err)
	}
	out := make([]stagedEvent, len(doc.Events))
	for i, evID := range doc.Events {
		if err := mongox.FindOne(ctx, f.db.Collection(events.OutboxCollection), mongox.ByID(evID), &out[i]); err != nil {
			t.Fatalf("event %s recorded by %s %s is not staged: %v", evID, collection, id, err)
		}
	}
	return out
}

func types(evs []stagedEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func status(err error) int {
	var he *httpx.Error
	if errors.As(err, &he) {
		return he.Status
	}
	return 0
}

func TestFirstWriteMaterialisesAndReportsTheVersion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p, err := f.svc.PutLLMTxt(context.Background(), f.t, "# Grace Hopper\n\nCompilers.")
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != 2 || p.Title != "Grace Hopper" {
		t.Fatalf("first write: got version %d titled %q, want version 2 titled Grace Hopper", p.Version, p.Title)
	}
	if r := f.id.lastReport(); r.Version != 2 || r.Title != "Grace Hopper" {
		t.Fatalf("reported to identity-svc: got %+v, want version 2 titled Grace Hopper", r)
	}
	evs := f.outbox(t, store.Versions, p.ID)
	if !slices.Equal(types(evs), []string{events.ContextUpdated}) || evs[0].RequestID != "req_test" || evs[0].Key != "obj_a" {
		t.Fatalf("events stored with the version: got %+v, want one context.updated of obj_a with the request id", evs)
	}
	first, err := f.svc.Version(context.Background(), "obj_a", 1)
	if err != nil || first.LLMTxt != "# Ada\n" {
		t.Fatalf("version 1: got %+v, %v; want identity-svc's initial text", first, err)
	}
}

func TestUnknownObjectIsNotFound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := f.svc.PutRules(context.Background(), profile.Target{ObjectID: "obj_none"}, nil)
	if status(err) != http.StatusNotFound {
		t.Fatalf("write to an object identity-svc does not know: got %v, want 404", err)
	}
}

// TestCommittedWriteAnswersItsSuccess: a write is reported to identity-svc at once, retried
// briefly; when every try misses, the committed write still answers its success (identity-svc
// records the version from the write's context.updated event), so that no client retries it into
// a version of its own.
func TestCommittedWriteAnswersItsSuccess(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.id.failReports = 2
	if _, err := f.svc.PutLLMTxt(ctx, f.t, "# Decided"); err != nil {
		t.Fatalf("a write whose report succeeds on the third try: %v", err)
	}
	f.id.failReports = 3
	written, err := f.svc.PutLLMTxt(ctx, f.t, "# Decided again")
	if err != nil || written.Version != 3 {
		t.Fatalf("a committed write identity-svc did not hear of: got %+v, %v; want its success", written, err)
	}
	p, err := f.svc.Profile(ctx, "obj_a")
	if err != nil || p.Version != 3 || p.LLMTxt != "# Decided again" {
		t.Fatalf("profile after the unreported write: got %+v, %v; want version 3", p, err)
	}
}

func TestCreateSourceIncludesItAndStoresItsEvent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	kind, text := profile.KindText, "# Notes\n\nAda wrote the first program."
	src, included, err := f.svc.CreateSource(ctx, f.t, &profile.NewSource{Kind: &kind, Text: &text})
	if err != nil {
		t.Fatal(err)
	}
	if !included || !strings.HasPrefix(src.ID, "src_") || src.Title != "Notes" {
		t.Fatalf("created source: got %+v included=%v, want an included src_ titled by its text", src, included)
	}
	evs := f.outbox(t, store.Sources, src.ID)
	if !slices.Equal(types(evs), []string{events.ContextSourceChanged}) || strings.Contains(evs[0].Payload, "first program") {
		t.Fatalf("source events: got %+v, want one context.source_changed without the text", evs)
	}
	p, err := f.svc.Profile(ctx, "obj_a")
	if err != nil || p.Change != store.ChangeSources || !slices.Equal(p.Included, []string{src.ID}) {
		t.Fatalf("profile after the source: got %+v, %v; want a sources version including it", p, err)
	}

	no := false
	_, included, err = f.svc.CreateSource(ctx, f.t, &profile.NewSource{Kind: &kind, Text: &text, Included: &no})
	if err != nil || included {
		t.Fatalf("source left out: included=%v, %v", included, err)
	}
	if again, _ := f.svc.Profile(ctx, "obj_a"); again.Version != p.Version {
		t.Fatalf("a source left out made version %d, want none after %d", again.Version, p.Version)
	}
}

func TestCreateSourceRefusesBadInput(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name string
		req  profile.NewSource
		want int
	}{
		{"unknown kind", profile.NewSource{Kind: str("ftp"), URL: str("https://example.com")}, 400},
		{"text with url", profile.NewSource{Kind: str("text"), Text: str("x"), URL: str("https://example.com")}, 400},
		{"blank text", profile.NewSource{Kind: str("text"), Text: str("  ")}, 400},
		{"url with text", profile.NewSource{Kind: str("url"), URL: str("https://example.com"), Text: str("x")}, 400},
		{"relative url", profile.NewSource{Kind: str("url"), URL: str("/page")}, 400},
		{"link-local url", profile.NewSource{Kind: str("url"), URL: str("http://169.254.169.254/")}, 400},
		{"text too large", profile.NewSource{Kind: str("text"), Text: str(strings.Repeat("x", httpx.MaxTextBytes+1))}, 413},
	} {
		_, _, err := f.svc.CreateSource(context.Background(), f.t, &tc.req)
		if status(err) != tc.want {
			t.Errorf("%s: got %v, want %d", tc.name, err, tc.want)
		}
	}
}

func TestPutContextTogglesSourcesWithTheirEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	kind, text := profile.KindText, "notes"
	a, _, err := f.svc.CreateSource(ctx, f.t, &profile.NewSource{Kind: &kind, Text: &text})
	if err != nil {
		t.Fatal(err)
	}
	off, on := false, true
	section := func(id string, inc *bool) profile.SectionChange { return profile.SectionChange{ID: &id, Included: inc} }
	p, err := f.svc.PutContext(ctx, f.t, profile.ContextChange{LLMTxt: "# New\n",
		Sections: []profile.SectionChange{section(profile.ProfileSection, &on), section(a.ID, &off)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Included) != 0 || p.Title != "New" {
		t.Fatalf("context write: got included %v title %q, want the source left out and the title New", p.Included, p.Title)
	}
	if got := types(f.outbox(t, store.Versions, p.ID)); !slices.Equal(got, []string{events.ContextUpdated, events.ContextSourceChanged}) {
		t.Fatalf("events of the context write: got %v, want context.updated and context.source_changed", got)
	}
	_, err = f.svc.PutContext(ctx, f.t, profile.ContextChange{LLMTxt: "x", Sections: []profile.SectionChange{section("src_unknown", &on)}})
	if status(err) != http.StatusBadRequest {
		t.Fatalf("a section naming no source of the object: got %v, want 400", err)
	}
	_, err = f.svc.PutContext(ctx, f.t, profile.ContextChange{LLMTxt: "x", Sections: []profile.SectionChange{section(profile.ProfileSection, &off)}})
	if status(err) != http.StatusBadRequest {
		t.Fatalf("leaving the profile section out: got %v, want 400", err)
	}
}

func TestComposableFetchesAStaleSourceOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	var hits atomic.Int32
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/markdown")
		_, _ = w.Write([]byte("Fetched words."))
	}))
	t.Cleanup(page.Close)
	kind, u := profile.KindURL, page.URL
	src, _, err := f.svc.CreateSource(ctx, f.t, &profile.NewSource{Kind: &kind, URL: &u})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, err := f.svc.Composable(ctx, "obj_a", []string{src.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Text != "Fetched words." || got[0].Unavailable {
			t.Fatalf("composable source: got %+v, want the fetched words", got)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("fetches of a source within its refresh time: got %d, want 1", n)
	}
}

func TestCreateLinkNamesOnlyTheObjectsSources(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	kind, text, title := profile.KindText, "shared words", "For Grace"
	src, _, err := f.svc.CreateSource(ctx, f.t, &profile.NewSource{Kind: &kind, Text: &text})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.CreateLink(ctx, f.t, &profile.NewLink{Title: &title, SourceIDs: []string{src.ID, "src_other"}}); status(err) != http.StatusBadRequest {
		t.Fatalf("a link naming an unknown source: got %v, want 400", err)
	}
	l, err := f.svc.CreateLink(ctx, f.t, &profile.NewLink{Title: &title, SourceIDs: []string{src.ID}})
	if err != nil {
		t.Fatal(err)
	}
	got, composed, err := f.svc.PublicLink(ctx, l.ID)
	if err != nil || got.Title != title || !strings.Contains(composed, "shared words") {
		t.Fatalf("public link: got %+v %q, %v; want the shared source composed", got, composed, err)
	}
	if _, _, err := f.svc.PublicLink(ctx, "lnk_missing"); status(err) != http.StatusNotFound {
		t.Fatalf("an unknown link: got %v, want 404", err)
	}
}

func TestRebuildMemoryKeepsMajorDecisions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	low, high := 0.2, 0.9
	st := store.New(f.db, testkit.Logger(t))
	for _, d := range []store.Decision{
		{ObjectID: "obj_a", NodeID: "n1", Title: "Use Go", Confidence: &high, CreatedAt: time.Now()},
		{ObjectID: "obj_a", NodeID: "n2", Title: "Maybe Rust", Confidence: &low, CreatedAt: time.Now()},
		{ObjectID: "obj_b", NodeID: "n3", Title: "Not ours", CreatedAt: time.Now()},
	} {
		if err := st.RecordDecision(ctx, &d); err != nil {
			t.Fatal(err)
		}
	}
	m, n, err := f.svc.RebuildMemory(ctx, f.t)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || !strings.Contains(m.Body, "Use Go") || strings.Contains(m.Body, "Rust") || m.Version != 1 || m.Change != store.MemoryRebuild {
		t.Fatalf("rebuilt memory from %d decisions: %q (version %d, %s), want only the major one as version 1",
			n, m.Body, m.Version, m.Change)
	}
}

// TestRebuildMemoryHonoursSupersession: after a decision that supersedes an earlier one, the
// rebuilt memory presents only the new one as current, names what it superseded and marks the
// old one as superseded.
func TestRebuildMemoryHonoursSupersession(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	st := store.New(f.db, testkit.Logger(t))
	at := time.Now().Add(-time.Hour)
	for _, d := range []store.Decision{
		{ObjectID: f.t.ObjectID, ThreadID: "thr_1", NodeID: "nod_old", Title: "Use Postgres", CreatedAt: at},
		{ObjectID: f.t.ObjectID, ThreadID: "thr_1", NodeID: "nod_new", Title: "Use SQLite", Supersedes: []string{"nod_old", "nod_hyp"},
			CreatedAt: at.Add(time.Minute)},
	} {
		if err := st.RecordDecision(ctx, &d); err != nil {
			t.Fatal(err)
		}
	}
	m, n, err := f.svc.RebuildMemory(ctx, f.t)
	if err != nil {
		t.Fatal(err)
	}
	mem := m.Body
	cur, old, _ := strings.Cut(mem, "## Superseded decisions")
	if n != 1 || !strings.Contains(cur, "## Use SQLite") || strings.Contains(cur, "## Use Postgres") {
		t.Fatalf("rebuilt from %d current decisions, want only the new one current:\n%s", n, mem)
	}
	if !strings.Contains(cur, `Supersedes "Use Postgres" (node nod_old), node nod_hyp.`) {
		t.Errorf("the new decision does not name what it superseded:\n%s", mem)
	}
	if !strings.Contains(old, `SUPERSEDED: "Use Postgres" (node nod_old`) || !strings.Contains(old, `replaced by "Use SQLite" (node nod_new)`) {
		t.Errorf("the old decision is not marked superseded:\n%s", mem)
	}
}

// TestEveryVersionTellsItsAdmission: the context.updated event of every version carries what its
// rules say of admission (mailbox-svc's projection is fed by it, never by a call), whatever the
// write changed, and no public payload of it shows them.
func TestEveryVersionTellsItsAdmission(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	admission := func(p *store.Profile) *contract.Admission {
		t.Helper()
		evs := f.outbox(t, store.Versions, p.ID)
		if len(evs) != 1 || evs[0].Type != events.ContextUpdated {
			t.Fatalf("events of version %d: got %v, want one context.updated", p.Version, types(evs))
		}
		var pending events.Event
		if err := json.Unmarshal([]byte(evs[0].Payload), &pending); err != nil {
			t.Fatal(err)
		}
		var d contract.ContextUpdatedData
		if err := pending.Decode(&d); err != nil {
			t.Fatal(err)
		}
		if d.Version != p.Version {
			t.Fatalf("context.updated of version %d names version %d", p.Version, d.Version)
		}
		public, ok, err := events.Public(pending)
		if err != nil || !ok {
			t.Fatalf("public payload: %v, %v", ok, err)
		}
		if _, shown := public.Data["admission"]; shown {
			t.Fatalf("the public payload shows the rules: %v", public.Data)
		}
		return d.Admission
	}
	want := func(name string, got *contract.Admission, mode, write string) {
		t.Helper()
		if got == nil || got.Mode != mode || got.WriteMailbox != write {
			t.Fatalf("%s: admission %+v, want mode %q write.mailbox %q", name, got, mode, write)
		}
	}

	p, err := f.svc.PutRules(ctx, f.t, &contract.Rules{
		ParticipantAdmission: &contract.RulesAdmission{Mode: "owner_approval"},
		Write:                &contract.RulesWrite{Mailbox: "verified_only"}})
	if err != nil {
		t.Fatal(err)
	}
	want("rules write", admission(p), "owner_approval", "verified_only")
	if p, err = f.svc.PutLLMTxt(ctx, f.t, "# Ada\n\nNew text."); err != nil {
		t.Fatal(err)
	}
	want("a later write of the text", admission(p), "owner_approval", "verified_only")
	if p, err = f.svc.PutRules(ctx, f.t, nil); err != nil {
		t.Fatal(err)
	}
	want("rules cleared", admission(p), "", "")
}
