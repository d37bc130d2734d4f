package consumers

import (
	"context"
	"fmt"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/controls"
	"github.com/svcdev/svc/pkg/events"
)

// AdmissionStore keeps mailbox-svc's projection of recipients' rules (store.Store).
type AdmissionStore interface {
	InsertAdmission(ctx context.Context, a *store.Admission) error
	SetAdmission(ctx context.Context, a *store.Admission) error
}

// Admissions keeps the projection of what recipients' rules say of admission, so that a send
// reads them from mailbox-svc's own database: identity-svc's object.created carries the rules an
// object is created with, context-svc's context.updated those of every later version (and its
// one-off context.admission those of objects whose context changed before that).
type Admissions struct {
	Store AdmissionStore
	// Cache is retired after every write of the projection (mailbox.AdmissionCache); nil for none.
	Cache interface {
		Changed(ctx context.Context, objectID string)
	}
	// Controls records the rules control version the projection has applied (controls.Versions),
	// which sends compare with the object's latest; nil records nothing.
	Controls AppliedVersions
	// Service is the name the applied versions are recorded under.
	Service string
}

// AppliedVersions records the control versions a projection has applied (controls.Versions).
type AppliedVersions interface {
	Applied(ctx context.Context, service, kind, objectID string, version int64) error
}

// AdmissionTopics are the topics Admissions consumes.
var AdmissionTopics = []string{events.TopicIdentity, events.TopicContext}

// Handle implements events.Handler; it is idempotent, and an event of an older version than the
// one recorded changes nothing.
func (h *Admissions) Handle(ctx context.Context, ev events.Event) error {
	switch ev.Type {
	case events.ObjectCreated:
		var d contract.ObjectCreatedData
		if err := ev.Decode(&d); err != nil || d.ObjectID == "" {
			return events.Permanent(fmt.Errorf("malformed %s event (%v)", ev.Type, err)) // retrying cannot help
		}
		a := d.Rules.Admission()
		if a == (contract.Admission{}) {
			return nil // no rules: the defaults apply without a record
		}
		return h.record(ctx, h.Store.InsertAdmission, &store.Admission{ObjectID: d.ObjectID, Version: d.Version, Mode: a.Mode, WriteMailbox: a.WriteMailbox})
	case events.ContextUpdated, events.ContextAdmission:
		var d contract.ContextUpdatedData
		if err := ev.Decode(&d); err != nil || ev.ObjectID == "" {
			return events.Permanent(fmt.Errorf("malformed %s event (%v)", ev.Type, err))
		}
		if d.Admission != nil { // else published before the events carried the rules
			a := &store.Admission{ObjectID: ev.ObjectID, Version: d.Version, Mode: d.Admission.Mode, WriteMailbox: d.Admission.WriteMailbox}
			if err := h.record(ctx, h.Store.SetAdmission, a); err != nil {
				return err
			}
		}
		// The version a rules write raised is the context version its event carries: once the
		// projection holds it, sends stop asking context-svc.
		if h.Controls != nil {
			return h.Controls.Applied(ctx, h.Service, controls.Rules, ev.ObjectID, int64(d.Version))
		}
		return nil
	}
	return nil
}

// record writes a with write, then retires the cached copies of the object's rules.
func (h *Admissions) record(ctx context.Context, write func(context.Context, *store.Admission) error, a *store.Admission) error {
	if err := write(ctx, a); err != nil {
		return err
	}
	if h.Cache != nil {
		h.Cache.Changed(ctx, a.ObjectID)
	}
	return nil
}
