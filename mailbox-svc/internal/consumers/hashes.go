// Package consumers holds what mailbox-svc consumes: identity-svc's hash changes, which keep the
// hashes shown in threads current, the rules objects are created with (identity-svc) and given
// later (context-svc), which keep the admission projection, and webhook-svc's notices, which
// become system messages. What it publishes is built in package mailbox (events.go).
package consumers

import (
	"context"
	"fmt"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// HashStore records an object's new current hash.
type HashStore interface {
	SetHash(ctx context.Context, objectID, hash string) error
}

// Hashes handles identity-svc's events.
type Hashes struct {
	Store HashStore
}

// Handle implements events.Handler; it is idempotent.
func (h *Hashes) Handle(ctx context.Context, ev events.Event) error {
	if ev.Type != events.ObjectHashChanged {
		return nil
	}
	var d contract.HashChangedData
	if err := ev.Decode(&d); err != nil || d.Hash == "" {
		return events.Permanent(fmt.Errorf("malformed %s event (%v)", ev.Type, err)) // retrying cannot help
	}
	return h.Store.SetHash(ctx, ev.ObjectID, d.Hash)
}
