package events_test

import (
	"context"
	"strings"
	"testing"

	"github.com/segmentio/kafka-go"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/testkit"
)

// TestCheckTopics: a missing topic and one with too few partitions are named, with how to fix
// them; the check itself creates nothing; topics with enough partitions pass.
func TestCheckTopics(t *testing.T) {
	env := testkit.Backends(t)
	ctx := context.Background()
	prefix := env.Name + "."
	topics := events.Topics(prefix)
	client := &kafka.Client{Addr: kafka.TCP(env.Brokers...)}
	create := func(name string, partitions int) {
		t.Helper()
		res, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
			{Topic: name, NumPartitions: partitions, ReplicationFactor: 1}}})
		if err != nil || res.Errors[name] != nil {
			t.Fatalf("create %s: %v %v", name, err, res)
		}
	}
	for _, name := range topics[1:] {
		create(name, 6)
	}
	err := events.CheckTopics(ctx, env.Brokers, topics, 6)
	if err == nil || !strings.Contains(err.Error(), topics[0]+" does not exist") || !strings.Contains(err.Error(), "docs/operations.md") {
		t.Fatalf("a missing topic: %v", err)
	}
	// The check did not create it.
	if err := events.CheckTopics(ctx, env.Brokers, topics[:1], 1); err == nil {
		t.Fatal("the check created the missing topic")
	}
	create(topics[0], 3)
	if err := events.CheckTopics(ctx, env.Brokers, topics, 6); err == nil || !strings.Contains(err.Error(), topics[0]+" has 3 partitions") {
		t.Fatalf("too few partitions: %v", err)
	}
	if err := events.CheckTopics(ctx, env.Brokers, topics, 3); err != nil {
		t.Fatalf("enough partitions: %v", err)
	}
}
