package consumers

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// SystemSender sends a message through the mailbox's one send path.
type SystemSender interface {
	Send(ctx context.Context, requestID string, d mailbox.Draft, key string) (*mailbox.Sent, error)
}

// CurrentHashes reads the current hashes of objects this mailbox knows.
type CurrentHashes interface {
	Hashes(ctx context.Context, objectIDs []string) (map[string]string, error)
}

// WebhookNotices handles webhook-svc's events: a subscription disabled or a delivery given up
// leaves a system message in its holder's own mailbox (from and to the holder).
type WebhookNotices struct {
	Sender SystemSender
	Hashes CurrentHashes
}

// Handle implements events.Handler; it is idempotent (the event id is the send's idempotency key).
func (n *WebhookNotices) Handle(ctx context.Context, ev events.Event) error {
	if ev.Type != events.WebhookDisabled && ev.Type != events.WebhookDeliveryGivenUp {
		return nil
	}
	var d contract.WebhookNoticeData
	if err := ev.Decode(&d); err != nil || d.Message == "" {
		return events.Permanent(fmt.Errorf("malformed %s event (%v)", ev.Type, err)) // retrying cannot help
	}
	current, err := n.Hashes.Hashes(ctx, []string{ev.ObjectID})
	if err != nil {
		return err
	}
	// The holder's current hash if the mailbox knows it, else its hash when it subscribed.
	hash := cmp.Or(current[ev.ObjectID], ev.Hash)
	_, err = n.Sender.Send(ctx, ev.RequestID, mailbox.Draft{FromHash: hash, ToHash: hash, Kind: "system", Body: d.Message, Notice: true}, ev.ID)
	var he *apierr.Error
	if errors.As(err, &he) && he.Status < 500 {
		return events.Permanent(fmt.Errorf("system message of %s: %w", ev.Type, err)) // the holder is gone or refuses
	}
	return err
}
