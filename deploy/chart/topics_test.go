package chart

import (
	"strings"
	"testing"
)

// TestTopicPartitions: every service but the gateway is told to check the topics' partitions at
// start-up, and the chart refuses a webhook-svc that could scale past them.
func TestTopicPartitions(t *testing.T) {
	m := mustRender(t, secretValues())
	for _, d := range m.deployments {
		got := ""
		for _, e := range d.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "KAFKA_TOPIC_PARTITIONS" {
				got = e.Value
			}
		}
		want := "6"
		if d.Labels[componentLabel] == "gateway" {
			want = ""
		}
		if got != want {
			t.Errorf("%s: KAFKA_TOPIC_PARTITIONS = %q, want %q", d.Name, got, want)
		}
	}
	_, _, err := render(t, withValues(secretValues(), map[string]any{"services.webhook-svc.autoscaling.maxReplicas": 7}))
	if err == nil || !strings.Contains(err.Error(), "config.kafkaTopicPartitions (6)") {
		t.Errorf("maxReplicas above the partitions: %v", err)
	}
	mustRender(t, withValues(secretValues(), map[string]any{"services.webhook-svc.autoscaling.maxReplicas": 12, "config.kafkaTopicPartitions": 12}))
}
