package mailbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/mailbox-svc/internal/consumers"
	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
	"github.com/svcdev/svc/pkg/versions"
)

// deliver hands a published event to a consumer's handler as the broker carries it: its payload,
// decoded.
func deliver(t *testing.T, h events.Handler, p events.Pending) error {
	t.Helper()
	var ev events.Event
	if err := json.Unmarshal([]byte(p.Payload), &ev); err != nil {
		t.Fatal(err)
	}
	return h(context.Background(), ev)
}

// objectCreated is identity-svc's object.created of o, created with rules.
func objectCreated(o contract.Object) events.Pending {
	return events.MustNew(events.TopicIdentity, events.ObjectCreated, o.ObjectID, o.Hash, "req", contract.ObjectCreatedData{Object: o})
}

// contextUpdated is context-svc's context.updated of an object's version whose rules say a of
// admission (nil: an event from before the events carried it).
func contextUpdated(o identity.Object, version int, a *contract.Admission) events.Pending {
	return events.MustNew(events.TopicContext, events.ContextUpdated, o.ObjectID, o.Hash, "req",
		contract.ContextUpdatedData{Version: version, Title: "t", Change: "rules", Admission: a})
}

// admissionOf opens a thread from alice to o and returns the admission the thread reports.
func (f *fixture) admissionOf(t *testing.T, o identity.Object) string {
	t.Helper()
	sent := f.send(t, "svc_alice", o.Hash, "", "may I?")
	th, err := f.store.Thread(context.Background(), sent.Message.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	return th.Admission
}

// TestAdmissionFollowsRulesEvents: a send takes the recipient's rules from mailbox-svc's own
// projection, fed by identity-svc's object.created and context-svc's context.updated; no other
// service is asked. Before any event, the rules the recipient was created with (carried by its
// resolution) apply, else the defaults; an event of an older version than the one recorded,
// whichever topic brings it, changes nothing.
func TestAdmissionFollowsRulesEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := (&consumers.Admissions{Store: f.store}).Handle
	step := func(name string, o identity.Object, want string) {
		t.Helper()
		if got := f.admissionOf(t, o); got != want {
			t.Fatalf("%s: participant_admission = %q, want %q", name, got, want)
		}
	}
	feed := func(evs ...events.Pending) {
		t.Helper()
		for _, ev := range evs {
			if err := deliver(t, h, ev); err != nil {
				t.Fatalf("Handle(%s): %v", ev.Type, err)
			}
		}
	}

	step("no event, no rules at creation", bob, mailbox.DefaultAdmission)
	// An object created without rules needs no record: the defaults apply.
	feed(objectCreated(contract.Object{ObjectID: carol.ObjectID, Hash: carol.Hash, Version: 1}))
	if _, err := f.store.Admission(context.Background(), carol.ObjectID); !errors.Is(err, mongox.ErrNotFound) {
		t.Fatalf("rules recorded for an object created without rules: %v", err)
	}
	step("no event, rules at creation", erin, "owner_approval")

	created := contract.Object{ObjectID: bob.ObjectID, Hash: bob.Hash, Version: 1,
		Rules: &contract.Rules{ParticipantAdmission: &contract.RulesAdmission{Mode: "owner_approval"}}}
	feed(objectCreated(created), objectCreated(created) /* redelivered */)
	step("after object.created", bob, "owner_approval")

	feed(contextUpdated(bob, 3, &contract.Admission{Mode: "approval"}))
	step("after a rules write", bob, "approval")
	// Late events of older versions: the context topic's own, and the creation from the identity
	// topic, which may be delivered after the context topic's.
	feed(contextUpdated(bob, 2, &contract.Admission{Mode: "open"}), objectCreated(created))
	step("after older versions' events", bob, "approval")
	feed(contextUpdated(bob, 4, nil))
	step("after an event without admission", bob, "approval")
	feed(contextUpdated(bob, 5, &contract.Admission{}))
	step("after the rules are cleared", bob, mailbox.DefaultAdmission)

	// The projection, once fed, is what counts: it overrides the rules erin was created with.
	feed(contextUpdated(erin, 2, &contract.Admission{Mode: "open"}))
	step("erin after a rules write", erin, "open")

	// context-svc's one-off context.admission (rules written under an older release) is read as a
	// context.updated of its version, older versions included.
	admission := func(o identity.Object, version int, a contract.Admission) events.Pending {
		return events.MustNew(events.TopicContext, events.ContextAdmission, o.ObjectID, "", "",
			contract.ContextUpdatedData{Version: version, Admission: &a})
	}
	feed(admission(erin, 4, contract.Admission{Mode: "closed"}))
	step("erin after the backfill", erin, "closed")
	feed(admission(erin, 3, contract.Admission{Mode: "open"}))
	step("erin after an older backfill", erin, "closed")

	// An event of another type on the topics is not the projection's; a malformed one cannot get
	// better by retrying (a dead letter).
	feed(events.MustNew(events.TopicContext, events.ContextSourceChanged, bob.ObjectID, bob.Hash, "req", contract.ContextSourceChangedData{SourceID: "src"}))
	for _, ev := range []events.Event{
		{Type: events.ObjectCreated, ObjectID: "obj_x", Data: []byte(`{"object_id":`)},
		{Type: events.ObjectCreated, ObjectID: "obj_x", Data: []byte(`{"object_id":""}`)},
		{Type: events.ContextUpdated, ObjectID: "obj_x", Data: []byte(`{"version":"two"}`)},
	} {
		if err := h(context.Background(), ev); !events.IsPermanent(err) {
			t.Errorf("Handle(%s %s) = %v, want a permanent error", ev.Type, ev.Data, err)
		}
	}
}

// TestVerifiedOnlyFollowsRulesEvents: write.mailbox verified_only, learnt from a context.updated
// event, refuses unsigned sends to the recipient, new threads and replies alike, and lifting it
// admits them again.
func TestVerifiedOnlyFollowsRulesEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	h := (&consumers.Admissions{Store: f.store}).Handle
	thread := f.send(t, "svc_alice", "svc_carol", "", "before the rule").Message.ThreadID

	if err := deliver(t, h, contextUpdated(carol, 2, &contract.Admission{WriteMailbox: "verified_only"})); err != nil {
		t.Fatal(err)
	}
	for _, threadID := range []string{"", thread} {
		d := note("svc_alice", "svc_carol", "unsigned")
		d.ThreadID = threadID
		_, err := f.sender.Send(ctx, "req", d, "")
		if e := httpx.AsError(err); err == nil || e.Status != http.StatusForbidden || e.Code != mailbox.CodeSenderUnverified {
			t.Fatalf("unsigned send (thread %q) to a verified_only box = %v, want 403 %s", threadID, err, mailbox.CodeSenderUnverified)
		}
	}
	// The rule is the recipient's: carol still sends unsigned to others.
	f.send(t, "svc_carol", "svc_bob", "", "from carol")

	if err := deliver(t, h, contextUpdated(carol, 3, &contract.Admission{WriteMailbox: "anyone"})); err != nil {
		t.Fatal(err)
	}
	f.send(t, "svc_alice", "svc_carol", thread, "after the rule")
}

// countingAdmissions is the real store, counting the reads of the admission projection.
type countingAdmissions struct {
	*store.Store
	reads atomic.Int64
}

func (c *countingAdmissions) Admission(ctx context.Context, objectID string) (*store.Admission, error) {
	c.reads.Add(1)
	return c.Store.Admission(ctx, objectID)
}

// TestAdmissionCacheFollowsTheProjection: with a replica's cache and the consumer's on one
// Redis, sends to a recipient whose rules are unchanged read the projection once (none recorded
// is cached too), and every write of the projection by the consumer holds for the next send.
func TestAdmissionCacheFollowsTheProjection(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	env := testkit.Backends(t)
	rdb := redis.NewClient(must(redis.ParseURL(env.RedisURL)))
	t.Cleanup(func() { _ = rdb.Close() })
	replica := func() *mailbox.AdmissionCache {
		return mailbox.NewAdmissionCache(versions.New(rdb, testkit.Logger(t), env.Name+":admission:", time.Hour), 100)
	}
	counted := &countingAdmissions{Store: f.store}
	f.sender.Store, f.sender.Admissions = counted, replica()
	h := (&consumers.Admissions{Store: f.store, Cache: replica()}).Handle
	step := func(name, want string, wantReads int64) {
		t.Helper()
		if got := f.admissionOf(t, bob); got != want {
			t.Fatalf("%s: participant_admission = %q, want %q", name, got, want)
		}
		if n := counted.reads.Load(); n != wantReads {
			t.Fatalf("%s: the projection was read %d times, want %d", name, n, wantReads)
		}
	}

	step("no rules recorded", mailbox.DefaultAdmission, 1)
	step("no rules recorded, again", mailbox.DefaultAdmission, 1)
	if err := deliver(t, h, contextUpdated(bob, 2, &contract.Admission{Mode: "approval"})); err != nil {
		t.Fatal(err)
	}
	step("after a rules event", "approval", 2)
	step("after a rules event, again", "approval", 2)
	if err := deliver(t, h, contextUpdated(bob, 3, &contract.Admission{Mode: "owner_approval"})); err != nil {
		t.Fatal(err)
	}
	step("after the next rules event", "owner_approval", 3)
}
