package webhook

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/svcdev/svc/pkg/events"
)

// TestSignVerifiesWithStandardWebhooks checks every signature of a rotation against the
// reference library, one secret at a time.
func TestSignVerifiesWithStandardWebhooks(t *testing.T) {
	t.Parallel()
	oldSecret, newSecret := NewSecret(), NewSecret()
	body := []byte(`{"type":"message","id":"evt_1","timestamp":"2026-01-01T00:00:00.000Z","data":{}}`)
	now := time.Now()
	h := http.Header{}
	h.Set("webhook-id", "evt_1")
	h.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	h.Set("webhook-signature", Sign([]string{oldSecret, newSecret}, "evt_1", now, body))
	for _, s := range []string{oldSecret, newSecret} {
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify(body, h); err != nil {
			t.Errorf("signature does not verify with one of the secrets: %v", err)
		}
	}
	other, _ := standardwebhooks.NewWebhook(NewSecret())
	if other.Verify(body, h) == nil {
		t.Error("a signature verifies with an unrelated secret")
	}
}

func TestRetryStrategy(t *testing.T) {
	t.Parallel()
	r := RetryStrategy{Schedule: DefaultSchedule, Jitter: 0.1, MaxRetryAfter: time.Hour}
	for i, want := range DefaultSchedule {
		d, ok := r.NextDuration(i, 0)
		if !ok || d < want*9/10 || d > want*11/10 {
			t.Errorf("retry %d: %s, %v; want %s ± 10%%", i, d, ok, want)
		}
	}
	if _, ok := r.NextDuration(len(DefaultSchedule), 0); ok {
		t.Error("the schedule never ends")
	}
	if d, _ := r.NextDuration(0, 30*time.Second); d != 30*time.Second {
		t.Errorf("Retry-After of 30s gave %s", d)
	}
	if d, _ := r.NextDuration(0, 48*time.Hour); d != time.Hour {
		t.Errorf("Retry-After past the cap gave %s, want the cap", d)
	}
	if _, err := ParseSchedule("5s,nope"); err == nil {
		t.Error("a bad schedule parses")
	}
}

// TestPayloadKeepsOnlyPublicFields checks the whitelist: unknown data fields never reach a
// receiver, and events without a public name produce nothing.
func TestPayloadKeepsOnlyPublicFields(t *testing.T) {
	t.Parallel()
	data, _ := json.Marshal(map[string]any{"message_id": "msg_1", "body": "hi", "from_object_id": "obj_secret", "guidance": "private"})
	name, body, err := NewPayload(events.Event{ID: "evt_1", Type: events.MessageCreated, Hash: "svc_a", Time: "t", Data: data})
	if err != nil || name != events.WebhookMessage {
		t.Fatalf("NewPayload = %q, %v", name, err)
	}
	if s := string(body); strings.Contains(s, "obj_secret") || strings.Contains(s, "private") || !strings.Contains(s, `"message_id":"msg_1"`) {
		t.Errorf("payload %s", s)
	}
	if name, _, _ := NewPayload(events.Event{ID: "evt_2", Type: events.KeyRotated, Data: data}); name != "" {
		t.Errorf("key.rotated became a webhook event %q", name)
	}
	if _, _, err := NewPayload(events.Event{ID: "evt_3", Type: events.MessageCreated, Data: []byte("[")}); err == nil {
		t.Error("malformed data gives no error")
	}
}
