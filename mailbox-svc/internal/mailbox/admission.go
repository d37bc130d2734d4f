package mailbox

import (
	"cmp"
	"context"
	"errors"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/rpc"
)

// AdmissionStore is mailbox-svc's projection of recipients' rules (store.Admission), kept by
// consumers.Admissions from identity-svc's and context-svc's events.
type AdmissionStore interface {
	Admission(ctx context.Context, objectID string) (*store.Admission, error)
}

// RecipientRules is what a send needs of the recipient's rules: the participant_admission of a
// thread it opens, and whether write.mailbox admits verified senders only.
type RecipientRules struct {
	Admission    string
	VerifiedOnly bool
}

// recipientRules reads the rules' admission, with the defaults for what they do not set.
func recipientRules(a contract.Admission) RecipientRules {
	return RecipientRules{Admission: cmp.Or(a.Mode, DefaultAdmission), VerifiedOnly: a.WriteMailbox == verifiedOnly}
}

// RulesReader reads an object's current admission rules from context-svc, which owns them
// (rpc.ContextClient).
type RulesReader interface {
	Admission(ctx context.Context, objectID string) (contract.Admission, error)
}

// RulesGuard decides whether mailbox-svc's projection of an object's rules has applied the
// object's latest rules write (controls.Guard): when it has not, context-svc is asked.
type RulesGuard interface {
	Get(ctx context.Context, objectID, key string, projection, owner func(context.Context) (contract.Admission, error)) (contract.Admission, error)
}

// RecipientRules returns what a send needs of the recipient's rules. They come from
// mailbox-svc's own projection of them while it has applied the recipient's latest rules write
// (the rules control version, pkg/controls); right after a rules write, until the projection has
// consumed its context.updated, context-svc is asked (and its answer kept for that version), so
// that a rules write binds every send that starts after its 200. Before any event told the
// projection the recipient's rules, the rules the recipient was created with apply, as
// identity-svc's resolution carries them (so rules given at creation bind the first send), else
// the defaults.
func (s *Sender) RecipientRules(ctx context.Context, to *identity.Object) (RecipientRules, error) {
	projection := func(ctx context.Context) (contract.Admission, error) { return s.projectedAdmission(ctx, to) }
	if s.RulesGuard == nil || s.Rules == nil {
		a, err := projection(ctx)
		return recipientRules(a), err
	}
	a, err := s.RulesGuard.Get(ctx, to.ObjectID, to.ObjectID, projection, func(ctx context.Context) (contract.Admission, error) {
		a, err := s.Rules.Admission(ctx, to.ObjectID)
		if errors.Is(err, rpc.ErrNotFound) { // context-svc has not seen the object yet
			return creationAdmission(to), nil
		}
		return a, err
	})
	if err != nil {
		return RecipientRules{}, err
	}
	return recipientRules(a), nil
}

// projectedAdmission reads the recipient's rules from the projection.
func (s *Sender) projectedAdmission(ctx context.Context, to *identity.Object) (contract.Admission, error) {
	a, err := s.Admissions.get(ctx, to.ObjectID, to.ObjectID, func(ctx context.Context) (*store.Admission, error) {
		a, err := s.Store.Admission(ctx, to.ObjectID)
		if errors.Is(err, mongox.ErrNotFound) {
			return nil, nil
		}
		return a, err
	})
	switch {
	case err != nil:
		return contract.Admission{}, err
	case a != nil:
		return a.Rules(), nil
	}
	return creationAdmission(to), nil
}

// creationAdmission is what the rules the object was created with say of admission.
func creationAdmission(to *identity.Object) contract.Admission {
	if to.Admission != nil {
		return *to.Admission
	}
	return contract.Admission{}
}
