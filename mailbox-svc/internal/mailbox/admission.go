package mailbox

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/rpc"
)

// AdmissionCache keeps each recipient's participant_admission in Redis, so that a send opening a
// thread does not call context-svc. An entry is labelled with the object's validator
// (httpx.ETags), the token that context-svc replaces after every write of the object's context
// and before it answers. An entry is used only while its label is the current validator, so a
// rules change is seen by the very next send; a lookup is labelled with the validator read before
// it, so a write that lands during the lookup leaves the entry unused rather than stale.
type AdmissionCache struct {
	Redis *redis.Client
	// ETags makes a validator for an object that has none yet (the same validators context-svc
	// labels its public reads with).
	ETags *httpx.ETags
	// TTL bounds how long an entry is kept.
	TTL time.Duration
}

func admissionKey(objectID string) string { return "svc:mailbox:admission:" + objectID }

// RecipientRules is what a send needs of the recipient's rules: the participant_admission of a
// thread it opens, and whether write.mailbox admits verified senders only.
type RecipientRules struct {
	Admission    string
	VerifiedOnly bool
}

// encode and decodeRules are the cached form of RecipientRules: "<admission> <write.mailbox>",
// "-" for a write.mailbox that is not set.
func (r RecipientRules) encode() string {
	w := "-"
	if r.VerifiedOnly {
		w = verifiedOnly
	}
	return r.Admission + " " + w
}

func decodeRules(s string) (RecipientRules, bool) {
	mode, w, ok := strings.Cut(s, " ")
	if !ok || mode == "" || strings.Contains(w, " ") {
		return RecipientRules{}, false
	}
	return RecipientRules{Admission: mode, VerifiedOnly: w == verifiedOnly}, true
}

// lookup returns the cached rules of objectID and true, or the label that a fresh lookup is to be
// cached under ("" when Redis does not answer: the lookup is then not cached). It costs one round
// trip when the entry is current.
func (c *AdmissionCache) lookup(ctx context.Context, objectID string) (rules RecipientRules, hit bool, label string) {
	vals, err := c.Redis.MGet(ctx, httpx.ETagKey(objectID), admissionKey(objectID)).Result()
	if err != nil || len(vals) != 2 {
		return RecipientRules{}, false, ""
	}
	token, _ := vals[0].(string)
	if entry, ok := vals[1].(string); ok && token != "" {
		if l, r, ok := strings.Cut(entry, " "); ok && l == token {
			if rules, ok := decodeRules(r); ok {
				return rules, true, token
			}
		}
	}
	if token == "" {
		if token, err = c.ETags.Current(ctx, objectID); err != nil {
			return RecipientRules{}, false, ""
		}
	}
	return RecipientRules{}, false, token
}

// store caches rules under label; a failure only costs the next send a lookup.
func (c *AdmissionCache) store(ctx context.Context, objectID, label string, rules RecipientRules) {
	_ = c.Redis.Set(ctx, admissionKey(objectID), label+" "+rules.encode(), c.TTL).Err()
}

// Admission returns the participant_admission mode of the recipient's rules, or the default
// when it has none or context-svc does not answer in time.
func (s *Sender) Admission(ctx context.Context, objectID string) string {
	return s.RecipientRules(ctx, objectID).Admission
}

// RecipientRules returns what a send needs of the recipient's rules, the defaults when it has
// none or context-svc does not answer in time. It is answered from Admissions when the cached
// entry is current.
func (s *Sender) RecipientRules(ctx context.Context, objectID string) RecipientRules {
	defaults := RecipientRules{Admission: DefaultAdmission}
	if s.Rules == nil {
		return defaults
	}
	ctx, cancel := context.WithTimeout(ctx, s.RulesTimeout)
	defer cancel()
	label := ""
	if s.Admissions != nil {
		rules, hit, l := s.Admissions.lookup(ctx, objectID)
		if hit {
			return rules
		}
		label = l
	}
	r, err := s.Rules.Rules(ctx, objectID)
	if err != nil {
		if !errors.Is(err, rpc.ErrNotFound) {
			s.Log.Warn("rules lookup failed; using the default admission", "object_id", objectID, "error", err)
		}
		return defaults
	}
	rules := defaults
	if r != nil && r.ParticipantAdmission != nil && r.ParticipantAdmission.Mode != "" {
		rules.Admission = r.ParticipantAdmission.Mode
	}
	rules.VerifiedOnly = r != nil && r.Write != nil && r.Write.Mailbox == verifiedOnly
	if label != "" {
		s.Admissions.store(ctx, objectID, label, rules)
	}
	return rules
}
