package claims

import (
	"time"

	"github.com/svcdev/svc/claims-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// This file builds every event claims-svc publishes. Each event is staged in the outbox under the
// claim state whose insert it reports (store.States), and confirmed once that insert succeeded.

// verifiedEvent reports that claim c was verified at at: identity-svc marks the object's mailbox
// claimed, and it is the public claim_verified webhook event.
func verifiedEvent(requestID string, c *store.Claim, at time.Time) events.Pending {
	return events.MustNew(events.TopicClaims, events.ClaimVerified, c.ObjectID, c.ObjectHash, requestID,
		contract.ClaimVerifiedData{ClaimID: c.ID, ProofType: c.ProofType, ClaimedTarget: c.ClaimedTarget, VerifiedAt: clock.Format(at)})
}

// lapsedEvent reports that claim c lapsed at at; remain says whether another claim of the
// object is still verified (when none is, identity-svc marks the mailbox unclaimed).
func lapsedEvent(requestID string, c *store.Claim, at time.Time, remain bool) events.Pending {
	return events.MustNew(events.TopicClaims, events.ClaimLapsed, c.ObjectID, c.ObjectHash, requestID,
		contract.ClaimLapsedData{ClaimID: c.ID, ProofType: c.ProofType, ClaimedTarget: c.ClaimedTarget,
			LapsedAt: clock.Format(at), VerifiedClaimsRemain: remain})
}
