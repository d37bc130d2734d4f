package object

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/svcdev/svc/identity-svc/internal/payment"
	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/service"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// sent is an outbox that records the events the use cases confirm. Tests that need the stored
// outbox use events.Outbox itself.
type sent struct {
	mu  sync.Mutex
	evs []events.Pending
}

func (r *sent) Stage(context.Context, string, any, ...events.Pending) error { return nil }
func (r *sent) Keep(context.Context, ...string) error                       { return nil }

func (r *sent) Confirm(evs ...events.Pending) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, evs...)
}

func (r *sent) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.evs))
	for i, ev := range r.evs {
		out[i] = ev.Type
	}
	return out
}

const voucherSecret = "test-voucher-secret"

// newService returns the use cases over a database of the test's own and a fresh Redis.
func newService(t testing.TB) (*Service, *sent) {
	t.Helper()
	env := testkit.Backends(t)
	db := testkit.Database(t, env, "identity")
	ctx := context.Background()
	if err := mongox.EnsureIndexes(ctx, db, append(store.Indexes, events.OutboxIndexes...)); err != nil {
		t.Fatal(err)
	}
	rdb, err := service.ConnectRedis(ctx, env.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	relay := &sent{}
	return &Service{Store: store.New(db), Outbox: relay, Redis: rdb, Payments: payment.NewVouchers(voucherSecret),
		Log: testkit.Logger(t), ETags: httpx.NewETags(rdb, testkit.Logger(t), time.Hour), Sealer: testSealer(t)}, relay
}
