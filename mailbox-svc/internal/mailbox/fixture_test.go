package mailbox_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// directory stands in for identity-svc's internal API: it resolves current and previous hashes
// of the objects it knows.
type directory struct {
	byHash map[string]identity.Object
}

func (d *directory) Resolve(_ context.Context, hash string) (*identity.Object, error) {
	o, ok := d.byHash[hash]
	if !ok {
		return nil, identity.ErrNotFound
	}
	return &o, nil
}

func (d *directory) Object(_ context.Context, objectID string) (*contract.Object, error) {
	for _, o := range d.byHash {
		if o.ObjectID == objectID {
			return &contract.Object{ObjectID: o.ObjectID, Hash: o.Hash}, nil
		}
	}
	return nil, identity.ErrNotFound
}

// outbox is the real outbox (staging into the test's database, never run), recording what the
// use cases confirm to the relay.
type outbox struct {
	*events.Outbox
	mu     sync.Mutex
	events []events.Pending
}

func (o *outbox) Confirm(evs ...events.Pending) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, evs...)
}

// payloads returns the confirmed events of type typ, decoded.
func (o *outbox) payloads(t *testing.T, typ string) []events.Event {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []events.Event
	for _, p := range o.events {
		if p.Type != typ {
			continue
		}
		var ev events.Event
		if err := json.Unmarshal([]byte(p.Payload), &ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// types returns the types of the enqueued events, in order.
func (o *outbox) types() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]string, len(o.events))
	for i, ev := range o.events {
		out[i] = ev.Type
	}
	return out
}

type fixture struct {
	db      *mongo.Database
	names   *mailbox.Names
	store   *store.Store
	outbox  *outbox
	sender  *mailbox.Sender
	threads *mailbox.Threads
	blocks  *mailbox.Blocks
}

// The objects the directory knows: alice, bob and carol; bob was once svc_bobold; dana is
// private and was once svc_danaold; erin was created with rules that ask for owner approval.
var (
	dana  = identity.Object{ObjectID: "obj_dana", Hash: "svc_dana", Visibility: "private"}
	alice = identity.Object{ObjectID: "obj_alice", Hash: "svc_alice", Visibility: "public"}
	bob   = identity.Object{ObjectID: "obj_bob", Hash: "svc_bob", Visibility: "public"}
	carol = identity.Object{ObjectID: "obj_carol", Hash: "svc_carol", Visibility: "public"}
	erin  = identity.Object{ObjectID: "obj_erin", Hash: "svc_erin", Visibility: "public",
		Admission: &contract.Admission{Mode: "owner_approval"}}
)

// newFixture runs the use cases on the real store, in a database of the test's own.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	db := testkit.Database(t, testkit.Backends(t), "mailbox")
	if err := mongox.EnsureIndexes(context.Background(), db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	dir := &directory{byHash: map[string]identity.Object{
		"svc_alice": alice, "svc_bob": bob, "svc_bobold": bob, "svc_carol": carol,
		"svc_dana": dana, "svc_danaold": dana, "svc_erin": erin,
	}}
	st := store.New(db)
	log := testkit.Logger(t)
	names := &mailbox.Names{Store: st, Identity: dir, Log: log}
	out := &outbox{Outbox: events.NewOutbox(db, nil, log, events.OutboxOptions{})}
	return &fixture{
		db: db, names: names, store: st, outbox: out,
		sender:  &mailbox.Sender{Store: st, Names: names, Outbox: out, IdempotencyTTL: time.Hour, Log: log},
		threads: &mailbox.Threads{Store: st, Names: names},
		blocks:  &mailbox.Blocks{Store: st, Names: names, Outbox: out},
	}
}

// count counts the documents of a collection (of the messages collection, the messages, not
// the references to them).
func (f *fixture) count(t *testing.T, coll string) int64 {
	t.Helper()
	filter := bson.D{}
	if coll == store.Messages {
		filter = bson.D{{Key: "body", Value: bson.D{{Key: "$exists", Value: true}}}}
	}
	n, err := f.db.Collection(coll).CountDocuments(context.Background(), filter)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func note(from, to, body string) mailbox.Draft {
	return mailbox.Draft{FromHash: from, ToHash: to, Kind: "note", Body: body}
}

// send sends a note (threadID "" opens a thread) and fails the test if it is refused.
func (f *fixture) send(t *testing.T, from, to, threadID, body string) *mailbox.Sent {
	t.Helper()
	d := note(from, to, body)
	d.ThreadID = threadID
	s, err := f.sender.Send(context.Background(), "req", d, "")
	if err != nil {
		t.Fatalf("send %s → %s: %v", from, to, err)
	}
	return s
}
