package events

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go"
)

// Producer writes events to Kafka with acks=all, keyed by object id.
type Producer struct {
	w      *kafka.Writer
	prefix string
}

// NewProducer returns a producer for brokers; prefix namespaces every topic name.
func NewProducer(brokers []string, prefix string) *Producer {
	return &Producer{prefix: prefix, w: &kafka.Writer{
		Addr:                   kafka.TCP(brokers...),
		Balancer:               &kafka.Hash{},
		RequiredAcks:           kafka.RequireAll,
		AllowAutoTopicCreation: true,
		BatchTimeout:           5 * time.Millisecond,
		BatchSize:              1000,
		WriteTimeout:           10 * time.Second,
		MaxAttempts:            3,
	}}
}

// Publish writes the events synchronously, in order, as one batch.
func (p *Producer) Publish(ctx context.Context, evs ...Pending) error {
	if len(evs) == 0 {
		return nil
	}
	msgs := make([]kafka.Message, len(evs))
	// The produce time travels as the message's timestamp: consumers measure their lag by it.
	now := time.Now()
	for i, e := range evs {
		msgs[i] = kafka.Message{
			Time:  now,
			Topic: p.prefix + e.Topic,
			Key:   []byte(e.Key),
			Value: []byte(e.Payload),
			Headers: []kafka.Header{
				{Key: "event_id", Value: []byte(e.ID)},
				{Key: "event_type", Value: []byte(e.Type)},
				{Key: "request_id", Value: []byte(e.RequestID)},
			},
		}
	}
	if err := p.w.WriteMessages(ctx, msgs...); err != nil {
		return fmt.Errorf("kafka publish: %w", err)
	}
	return nil
}

// Close flushes and closes the writer.
func (p *Producer) Close() error { return p.w.Close() }

// Ping reports whether a broker answers, for readiness probes.
func Ping(ctx context.Context, brokers []string) error {
	var d net.Dialer
	var last error
	for _, b := range brokers {
		conn, err := d.DialContext(ctx, "tcp", b)
		if err == nil {
			return conn.Close()
		}
		last = err
	}
	return fmt.Errorf("kafka: no broker answers: %w", last)
}
