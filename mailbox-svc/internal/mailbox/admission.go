package mailbox

import (
	"context"
	"errors"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/mongox"
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
	r := RecipientRules{Admission: a.Mode, VerifiedOnly: a.WriteMailbox == verifiedOnly}
	if r.Admission == "" {
		r.Admission = DefaultAdmission
	}
	return r
}

// RecipientRules returns what a send needs of the recipient's rules, from mailbox-svc's own
// projection of them: no other service is asked. A rules write binds sends a moment after it
// is answered, once its context.updated event is consumed. Before any event told the projection
// the recipient's rules, the rules the recipient was created with apply, as identity-svc's
// resolution carries them (so rules given at creation bind the first send), else the defaults.
func (s *Sender) RecipientRules(ctx context.Context, to *identity.Object) (RecipientRules, error) {
	a, err := s.Store.Admission(ctx, to.ObjectID)
	switch {
	case err == nil:
		return recipientRules(a.Rules()), nil
	case !errors.Is(err, mongox.ErrNotFound):
		return RecipientRules{}, err
	case to.Admission != nil:
		return recipientRules(*to.Admission), nil
	}
	return recipientRules(contract.Admission{}), nil
}
