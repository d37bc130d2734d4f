// Package consumers holds what identity-svc consumes: verified and lapsed claims, which mark an
// object's mailbox as claimed or, once no verified claim remains, unclaimed.
package consumers

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/svcdev/svc/identity-svc/internal/object"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// Claims handles claims-svc's events.
type Claims struct{ Objects *object.Service }

// Handle implements events.Handler; it is idempotent.
func (h *Claims) Handle(ctx context.Context, ev events.Event) error {
	switch ev.Type {
	case events.ClaimVerified:
		var d contract.ClaimVerifiedData
		if err := ev.Decode(&d); err != nil {
			return events.Permanent(err) // a malformed event cannot get better by retrying
		}
		return h.Objects.RecordClaim(ctx, ev.ObjectID, object.VerifiedClaim{
			ClaimID: d.ClaimID, Network: d.ProofType, Handle: handleOf(d.ProofType, d.ClaimedTarget), At: happened(d.VerifiedAt),
		})
	case events.ClaimLapsed:
		// The mailbox goes back to unclaimed when the object holds no other verified claim.
		var d contract.ClaimLapsedData
		if err := ev.Decode(&d); err != nil {
			return events.Permanent(err)
		}
		return h.Objects.RecordLapse(ctx, ev.ObjectID, d.ClaimID, happened(d.LapsedAt))
	}
	return nil
}

// happened is the time an event's data names, or now when it names none that reads.
func happened(at string) time.Time {
	if t, err := time.Parse(clock.Layout, at); err == nil {
		return t
	}
	return clock.Now()
}

// handleOf is the handle a claim of network names: the account, lower-cased, as "user@host"
// for Mastodon (a user name there is only unique on its instance), the last path segment of a
// profile URL or the bare handle ("@name", "u/name") elsewhere.
func handleOf(network, target string) string {
	if network != "mastodon" {
		return socialHandle(strings.TrimPrefix(strings.TrimSpace(target), "u/"))
	}
	target = strings.TrimSpace(target)
	if u, err := url.Parse(target); err == nil && u.Host != "" {
		return strings.ToLower(strings.TrimPrefix(strings.Trim(u.Path, "/"), "@") + "@" + u.Host)
	}
	return strings.ToLower(strings.TrimPrefix(target, "@"))
}

// socialHandle reads a handle from "@name", "name" or a profile URL.
func socialHandle(target string) string {
	target = strings.TrimSpace(target)
	if u, err := url.Parse(target); err == nil && u.Host != "" {
		target = strings.Trim(u.Path, "/")
		if i := strings.LastIndex(target, "/"); i >= 0 {
			target = target[i+1:]
		}
	}
	return strings.ToLower(strings.TrimPrefix(target, "@"))
}
