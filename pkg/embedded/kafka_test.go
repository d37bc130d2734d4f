package embedded

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

const testTopic = "svc.test.v1"

func startTestKafka(t *testing.T, dir string) *Kafka {
	t.Helper()
	k, err := StartKafka(KafkaOptions{DataDir: filepath.Join(dir, "kafka"), IDFile: filepath.Join(dir, "kafka-cluster-id"),
		Topics: []string{testTopic}, Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// produce writes n records with values prefix-0…, acknowledged by the broker.
func produce(t *testing.T, k *Kafka, prefix string, n int) {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(k.Brokers...), Topic: testTopic, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	defer w.Close()
	for i := range n {
		if err := w.WriteMessages(context.Background(), kafka.Message{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf("%s-%d", prefix, i))}); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
}

// values reads every record of the topic's partitions.
func values(t *testing.T, k *Kafka) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	for p := range 2 {
		conn, err := kafka.DialLeader(context.Background(), "tcp", k.Brokers[0], testTopic, p)
		if err != nil {
			t.Fatal(err)
		}
		last, err := conn.ReadLastOffset()
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		for off := int64(0); off < last; {
			if _, err := conn.Seek(off, kafka.SeekAbsolute); err != nil {
				t.Fatal(err)
			}
			msg, err := conn.ReadMessage(1 << 20)
			if err != nil {
				t.Fatalf("partition %d offset %d of %d unreadable: %v", p, off, last, err)
			}
			got[string(msg.Value)] = true
			off = msg.Offset + 1
		}
		conn.Close()
	}
	return got
}

// TestKafkaSurvivesAnAbandonedRun leaves a cluster running without stopping it (as SIGKILL
// leaves its files) and starts another on its directory: the start reports the unclean stop,
// every acknowledged record is there, and records written after it are readable too.
func TestKafkaSurvivesAnAbandonedRun(t *testing.T) {
	dir := t.TempDir()
	first := startTestKafka(t, dir)
	if first.Recovery != KafkaFresh {
		t.Fatalf("first start: recovery %v, want fresh", first.Recovery)
	}
	produce(t, first, "before", 20)
	// first is never stopped: its files stay as a kill leaves them.
	second := startTestKafka(t, dir)
	defer second.Stop()
	if second.Recovery != KafkaUnclean {
		t.Fatalf("start after the abandoned run: recovery %v, want unclean", second.Recovery)
	}
	produce(t, second, "after", 20)
	got := values(t, second)
	for i := range 20 {
		if !got[fmt.Sprintf("before-%d", i)] || !got[fmt.Sprintf("after-%d", i)] {
			t.Fatalf("record %d missing after the unclean restart: %v", i, got)
		}
	}
}

// TestKafkaReportsALostOrCutDirectory deletes the directory of a stopped cluster, then cuts
// its segment files: each start says so, and the cluster works again.
func TestKafkaReportsALostOrCutDirectory(t *testing.T) {
	dir := t.TempDir()
	k := startTestKafka(t, dir)
	produce(t, k, "one", 10)
	k.Stop()
	k = startTestKafka(t, dir)
	if k.Recovery != KafkaClean {
		t.Fatalf("start after an orderly stop: recovery %v, want clean", k.Recovery)
	}
	k.Stop()
	if err := os.RemoveAll(filepath.Join(dir, "kafka")); err != nil {
		t.Fatal(err)
	}
	k = startTestKafka(t, dir)
	if k.Recovery != KafkaLost || !k.Recovery.LostEvents() {
		t.Fatalf("start after the directory was deleted: recovery %v, want lost", k.Recovery)
	}
	produce(t, k, "two", 10)
	k.Stop()
	segs, _ := filepath.Glob(filepath.Join(dir, "kafka", "partitions", "*", "*.dat"))
	for _, s := range segs {
		info, err := os.Stat(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(s, info.Size()-3); err != nil {
			t.Fatal(err)
		}
	}
	k = startTestKafka(t, dir)
	defer k.Stop()
	if k.Recovery != KafkaRepaired {
		t.Fatalf("start after the segments were cut: recovery %v, want repaired", k.Recovery)
	}
	produce(t, k, "three", 10)
	got := values(t, k)
	for i := range 10 {
		if !got[fmt.Sprintf("three-%d", i)] {
			t.Fatalf("record three-%d missing after the repair: %v", i, got)
		}
	}
}
