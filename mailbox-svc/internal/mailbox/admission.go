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

// lookup returns the cached mode of objectID and true, or the label that a fresh lookup is to be
// cached under ("" when Redis does not answer: the lookup is then not cached). It costs one round
// trip when the entry is current.
func (c *AdmissionCache) lookup(ctx context.Context, objectID string) (mode string, hit bool, label string) {
	vals, err := c.Redis.MGet(ctx, httpx.ETagKey(objectID), admissionKey(objectID)).Result()
	if err != nil || len(vals) != 2 {
		return "", false, ""
	}
	token, _ := vals[0].(string)
	if entry, ok := vals[1].(string); ok && token != "" {
		if l, m, ok := strings.Cut(entry, " "); ok && l == token && m != "" {
			return m, true, token
		}
	}
	if token == "" {
		if token, err = c.ETags.Current(ctx, objectID); err != nil {
			return "", false, ""
		}
	}
	return "", false, token
}

// store caches mode under label; a failure only costs the next send a lookup.
func (c *AdmissionCache) store(ctx context.Context, objectID, label, mode string) {
	_ = c.Redis.Set(ctx, admissionKey(objectID), label+" "+mode, c.TTL).Err()
}

// Admission returns the participant_admission mode of the recipient's rules, or the default
// when it has none or context-svc does not answer in time. It is answered from Admissions when
// the cached entry is current.
func (s *Sender) Admission(ctx context.Context, objectID string) string {
	if s.Rules == nil {
		return DefaultAdmission
	}
	ctx, cancel := context.WithTimeout(ctx, s.RulesTimeout)
	defer cancel()
	label := ""
	if s.Admissions != nil {
		mode, hit, l := s.Admissions.lookup(ctx, objectID)
		if hit {
			return mode
		}
		label = l
	}
	r, err := s.Rules.Rules(ctx, objectID)
	if err != nil {
		if !errors.Is(err, rpc.ErrNotFound) {
			s.Log.Warn("rules lookup failed; using the default admission", "object_id", objectID, "error", err)
		}
		return DefaultAdmission
	}
	mode := DefaultAdmission
	if r != nil && r.ParticipantAdmission != nil && r.ParticipantAdmission.Mode != "" {
		mode = r.ParticipantAdmission.Mode
	}
	if label != "" {
		s.Admissions.store(ctx, objectID, label, mode)
	}
	return mode
}
