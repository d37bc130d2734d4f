package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkWebhookDelivery measures message → delivered: messages are sent through the gateway
// at a steady 100 per second to an object with a webhook, and the latency of each is the time
// from sending the message to the local HTTPS receiver getting its delivery (outbox relay, Kafka,
// fan-out, signing, the POST). The suite is new for each run, so the first seconds pay for opening
// connection pools and for the store's first writes: three seconds at the same rate warm it up
// before the measured messages. It reports p50 and p99 in milliseconds:
//
//	go test ./deploy/e2e -run '^$' -bench WebhookDelivery -benchtime 1000x
func BenchmarkWebhookDelivery(b *testing.B) {
	const rate, warmUp = 100, 300
	rcv := newReceiver(b)
	env := webhookEnv(b, rcv)
	hash, key := env.CreateObject(b, nil)
	sender, _ := env.CreateObject(b, nil)
	createWebhook(b, env, hash, key, map[string]any{"callback_url": rcv.URL("/bench"), "events": []string{"message"}})
	threadID := Str(b, sendMessage(b, env, sender, hash, "", "warm-up"), "thread_id")
	rcv.waitFor(b, env, 1)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	send := func(n int, label string) map[string]time.Time {
		var mu sync.Mutex
		sentAt := map[string]time.Time{}
		var wg sync.WaitGroup
		tick := time.NewTicker(time.Second / rate)
		defer tick.Stop()
		for i := range n {
			<-tick.C
			wg.Go(func() {
				req, _ := json.Marshal(map[string]any{"from_hash": sender, "to_hash": hash, "kind": "note", "body": fmt.Sprintf("%s %d", label, i), "thread_id": threadID})
				start := time.Now()
				resp, err := client.Post(env.URL+"/api/messages", "application/json", bytes.NewReader(req))
				if err != nil {
					b.Error(err)
					return
				}
				defer resp.Body.Close()
				var m struct {
					ID string `json:"id"`
				}
				raw, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != http.StatusCreated || json.Unmarshal(raw, &m) != nil {
					b.Errorf("send answered %d: %s", resp.StatusCode, raw)
					return
				}
				mu.Lock()
				sentAt[m.ID] = start
				mu.Unlock()
			})
		}
		wg.Wait()
		return sentAt
	}
	send(warmUp, "warm-up")
	rcv.waitFor(b, env, 1+warmUp)
	b.ResetTimer()
	sentAt := send(b.N, "bench")
	got := rcv.waitFor(b, env, 1+warmUp+b.N)
	b.StopTimer()
	var lat []time.Duration
	for _, r := range got {
		if start, ok := sentAt[fmt.Sprint(r.Payload.Data["message_id"])]; ok {
			lat = append(lat, r.At.Sub(start))
		}
	}
	if len(lat) == 0 {
		b.Fatal("no delivery measured")
	}
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.Logf("%d messages at %d/s after %d to warm up: message → delivered p50 %s, p99 %s", len(lat), rate, warmUp, p50, p99)
}
