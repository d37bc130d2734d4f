package mailbox_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/mailbox-svc/internal/consumers"
	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/controls"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/testkit"
)

// ownerRules stands in for context-svc's internal rules read: what the owner's store holds now.
type ownerRules struct {
	rules map[string]contract.Admission
	down  bool
	asked int
}

func (o *ownerRules) Admission(_ context.Context, objectID string) (contract.Admission, error) {
	o.asked++
	if o.down {
		return contract.Admission{}, errors.New("dial tcp: connection refused")
	}
	return o.rules[objectID], nil
}

// TestRulesBindBeforeTheProjectionHasThem: once context-svc has raised a recipient's rules
// version, a send is judged by context-svc's answer while mailbox-svc's projection has not
// applied the version (its context.updated still queued), keeping the answer for that version,
// refused with 503 when context-svc
// cannot answer, and judged by the projection again, without asking, once the consumer has
// applied the event.
func TestRulesBindBeforeTheProjectionHasThem(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	env := testkit.Backends(t)
	rdb := redis.NewClient(must(redis.ParseURL(env.RedisURL)))
	t.Cleanup(func() { _ = rdb.Close() })
	ctl := controls.New(rdb)
	service := env.Name + ".mailbox-svc" // the test's own keys in the shared Redis
	owner := &ownerRules{rules: map[string]contract.Admission{}}
	f.sender.Rules, f.sender.RulesGuard = owner, controls.NewGuard[contract.Admission](ctl, service, controls.Rules, 100)
	h := (&consumers.Admissions{Store: f.store, Controls: ctl, Service: service}).Handle
	unsigned := func() error {
		_, err := f.sender.Send(ctx, "req", note("svc_alice", "svc_carol", "unsigned"), "")
		return err
	}
	if err := unsigned(); err != nil || owner.asked != 0 {
		t.Fatalf("send before any rules write: %v, context-svc asked %d times; want sent, not asked", err, owner.asked)
	}

	// carol closes her mailbox to unverified senders: context-svc stores version 2 and raises
	// the version before its 200; the event has not reached the projection.
	owner.rules[carol.ObjectID] = contract.Admission{WriteMailbox: "verified_only"}
	if err := ctl.Raise(ctx, controls.Rules, carol.ObjectID, 2); err != nil {
		t.Fatal(err)
	}
	err := unsigned()
	if e := httpx.AsError(err); err == nil || e.Status != http.StatusForbidden || e.Code != mailbox.CodeSenderUnverified {
		t.Fatalf("unsigned send after the rules' 200, projection behind = %v, want 403 %s", err, mailbox.CodeSenderUnverified)
	}
	// The answer is kept for that version: the next send does not ask again.
	if asked := owner.asked; unsigned() == nil || owner.asked != asked {
		t.Fatalf("a second send under the same version asked context-svc again, or was taken")
	}
	// Another rules write while context-svc is unreachable: 503, never the stale projection.
	owner.down = true
	if err := ctl.Raise(ctx, controls.Rules, carol.ObjectID, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := f.sender.Send(ctx, "req", note("svc_bob", "svc_carol", "unsigned"), ""); httpx.AsError(err).Status != http.StatusServiceUnavailable {
		t.Fatalf("send while context-svc is down and the projection behind = %v, want 503", err)
	}

	// The projection applies version 3: sends follow it without asking context-svc.
	if err := deliver(t, h, contextUpdated(carol, 3, &contract.Admission{WriteMailbox: "verified_only"})); err != nil {
		t.Fatal(err)
	}
	asked := owner.asked
	err = unsigned()
	if e := httpx.AsError(err); err == nil || e.Code != mailbox.CodeSenderUnverified || owner.asked != asked {
		t.Fatalf("send once the projection applied the rules = %v, context-svc asked %d more times; want 403 %s from the projection",
			err, owner.asked-asked, mailbox.CodeSenderUnverified)
	}
}
