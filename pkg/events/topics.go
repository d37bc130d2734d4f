package events

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

// CheckTopics reports the topics that the brokers lack, or hold with fewer than minPartitions
// partitions, in one error that names each and how to fix it. It never creates a topic: the
// metadata request asks for no auto-creation, so that a topic is made once, by the operator,
// with the partitions that the consumer groups' scaling assumes (docs/operations.md).
func CheckTopics(ctx context.Context, brokers, topics []string, minPartitions int) error {
	client := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	res, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: topics})
	if err != nil {
		return fmt.Errorf("kafka topics: read metadata: %w", err)
	}
	found := map[string]kafka.Topic{}
	for _, t := range res.Topics {
		if t.Error == nil {
			found[t.Name] = t
		}
	}
	var problems []string
	for _, name := range topics {
		t, ok := found[name]
		switch {
		case !ok:
			problems = append(problems, name+" does not exist")
		case len(t.Partitions) < minPartitions:
			problems = append(problems, fmt.Sprintf("%s has %d partitions", name, len(t.Partitions)))
		}
	}
	if len(problems) > 0 {
		return errors.New("kafka topics: " + strings.Join(problems, "; ") + fmt.Sprintf(
			"; KAFKA_TOPIC_PARTITIONS asks for at least %d partitions each: create or extend the topics (kafka-topics.sh --create or --alter, see docs/operations.md \"Kafka topics\"), or set KAFKA_TOPIC_PARTITIONS=0 to skip this check", minPartitions))
	}
	return nil
}
