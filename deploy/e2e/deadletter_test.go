package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

func deadEvents(t *testing.T, e *Env) []map[string]any {
	t.Helper()
	var out struct {
		DeadEvents []map[string]any `json:"dead_events"`
	}
	e.internal(t, "identity-svc", "GET", "/internal/v1/dead-events", true).Expect(t, 200).Decode(t, &out)
	return out.DeadEvents
}

// TestDeadLettersReplay breaks identity-svc's handling of claim.verified (its Redis fails) past
// the retry period, and publishes a malformed claim: both land in the dead letters. With Redis
// back, an operator replays the first; the malformed one cannot be replayed and is deleted.
func TestDeadLettersReplay(t *testing.T) {
	t.Parallel()
	redis := miniredis.RunT(t)
	e := Start(t, WithEnv("REDIS_URL", "redis://"+redis.Addr()), WithEnv("CONSUMER_RETRY_FOR", "1s"),
		WithEnv("CONSUMER_RETRY_MIN", "50ms"))
	hash, _ := e.CreateObject(t, nil)
	objectID := e.Internal(t, "identity-svc", "GET", "/internal/v1/resolve/"+hash)["object_id"].(string)
	prod := events.NewProducer(e.Brokers, e.Name+".")
	defer prod.Close()
	claim := events.MustNew(events.TopicClaims, events.ClaimVerified, objectID, hash, "req_test_claim",
		contract.ClaimVerifiedData{ClaimID: "clm_1", ProofType: "github", ClaimedTarget: "octocat", VerifiedAt: "2026-01-01T00:00:00.000Z"})
	malformed := events.MustNew(events.TopicClaims, events.ClaimVerified, objectID, hash, "req_test_bad", "not an object")

	redis.SetError("the cache is down")
	if err := prod.Publish(context.Background(), claim, malformed); err != nil {
		t.Fatal(err)
	}
	e.Eventually(t, func() bool { return len(deadEvents(t, e)) == 2 }, "both events are dead-lettered")
	if metrics := string(e.internal(t, "identity-svc", "GET", "/metrics", false).Expect(t, 200).Body); !strings.Contains(metrics, "\nsvc_dead_events 2\n") {
		t.Errorf("/metrics does not count 2 dead letters:\n%s", metrics)
	}
	redis.SetError("")
	ids := map[string]string{}
	for _, d := range deadEvents(t, e) {
		ids[d["event_id"].(string)] = d["id"].(string)
		if d["group"] != "identity-svc.claims" || d["error"] == "" {
			t.Errorf("dead letter %v, want group identity-svc.claims and an error", d)
		}
	}
	if ids[claim.ID] == "" || ids[malformed.ID] == "" {
		t.Fatalf("dead letters %v, want %s and %s", ids, claim.ID, malformed.ID)
	}

	e.internal(t, "identity-svc", "GET", "/internal/v1/dead-events", false).Expect(t, http.StatusUnauthorized)
	e.internal(t, "identity-svc", "POST", "/internal/v1/dead-events/"+ids[claim.ID]+"/replay", true).Expect(t, 200)
	e.internal(t, "identity-svc", "POST", "/internal/v1/dead-events/"+ids[malformed.ID]+"/replay", true).
		ExpectError(t, http.StatusConflict, "CONFLICT")
	e.internal(t, "identity-svc", "POST", "/internal/v1/dead-events/nope/replay", true).ExpectError(t, http.StatusNotFound, "NOT_FOUND")
	e.internal(t, "identity-svc", "DELETE", "/internal/v1/dead-events/"+ids[malformed.ID], true).Expect(t, 200)
	if left := deadEvents(t, e); len(left) != 0 {
		t.Errorf("dead letters after replay and delete: %v", left)
	}
	if got := e.Do(t, "GET", "/api/objects/"+hash, "", nil).JSON(t)["mailbox_status"]; got != "claimed" {
		t.Errorf("mailbox_status %v after the replayed claim, want claimed", got)
	}
}
