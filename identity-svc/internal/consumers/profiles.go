package consumers

import (
	"context"

	"github.com/svcdev/svc/identity-svc/internal/object"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// Profiles records each context version's title and version from context-svc's context.updated
// events. context-svc also reports a write at once, so that the object read shows it when its
// answer returns; the event is what makes the record durable when that report misses.
type Profiles struct{ Objects *object.Service }

// Handle implements events.Handler; it is idempotent (a version is recorded at most once, and an
// older one never replaces a newer).
func (h *Profiles) Handle(ctx context.Context, ev events.Event) error {
	if ev.Type != events.ContextUpdated {
		return nil
	}
	var d contract.ContextUpdatedData
	if err := ev.Decode(&d); err != nil {
		return events.Permanent(err)
	}
	return h.Objects.ReportProfile(ctx, ev.ObjectID, contract.ProfileUpdate{Version: d.Version, UpdatedAt: d.UpdatedAt, Title: d.Title})
}
