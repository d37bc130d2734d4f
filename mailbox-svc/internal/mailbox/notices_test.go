package mailbox_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/mailbox-svc/internal/consumers"
	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
)

// TestWebhookNoticesLeaveASystemMessage: webhook-svc's notices (a subscription disabled, a
// delivery given up) become one system message in the holder's own mailbox, sent through the
// one send path under the hash the mailbox knows as current; a redelivered notice sends nothing
// more, and a notice that can never be sent is a dead letter at once.
func TestWebhookNoticesLeaveASystemMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	h := (&consumers.WebhookNotices{Sender: f.sender, Hashes: f.store}).Handle
	if err := f.store.RememberHash(ctx, bob.ObjectID, bob.Hash); err != nil {
		t.Fatal(err)
	}
	// The notice names bob by the hash he had when he subscribed.
	disabled := events.MustNew(events.TopicWebhook, events.WebhookDisabled, bob.ObjectID, "svc_bobold", "req_notice",
		contract.WebhookNoticeData{SubscriptionID: "whk_1", Kind: "webhook", Reason: "gone", Message: "Your webhook whk_1 was disabled."})
	for range 2 {
		if err := deliver(t, h, disabled); err != nil {
			t.Fatalf("Handle(%s): %v", disabled.Type, err)
		}
	}
	msgs, err := mongox.FindAll[store.Message](ctx, f.db.Collection(store.Messages), bson.D{{Key: "body", Value: bson.D{{Key: "$exists", Value: true}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 {
		t.Fatalf("%d messages after a redelivered notice, want 1", len(msgs))
	}
	if m := msgs[0]; m.Kind != "system" || m.FromID != bob.ObjectID || m.ToID != bob.ObjectID || m.Body != "Your webhook whk_1 was disabled." {
		t.Fatalf("the notice's message: %+v, want a system message from and to bob", m)
	}

	unknown := events.MustNew(events.TopicWebhook, events.WebhookDeliveryGivenUp, "obj_gone", "svc_gone", "req_notice",
		contract.WebhookNoticeData{SubscriptionID: "whk_2", Message: "A delivery was given up."})
	if err := deliver(t, h, unknown); !events.IsPermanent(err) {
		t.Errorf("a notice to an object the directory does not know: %v, want a permanent error", err)
	}
	empty := events.MustNew(events.TopicWebhook, events.WebhookDisabled, bob.ObjectID, bob.Hash, "req_notice", contract.WebhookNoticeData{})
	if err := deliver(t, h, empty); !events.IsPermanent(err) {
		t.Errorf("a notice without a message: %v, want a permanent error", err)
	}
	if err := deliver(t, h, events.MustNew(events.TopicWebhook, "webhook.created", bob.ObjectID, bob.Hash, "req", map[string]string{})); err != nil {
		t.Errorf("an event that is no notice: %v", err)
	}
}
