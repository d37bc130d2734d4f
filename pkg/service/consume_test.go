package service

import (
	"context"
	"testing"

	"github.com/svcdev/svc/pkg/events"
)

// TestConsumeRefusesAConsumerWithoutOneHandler: a Consumer with no handler, or with both kinds,
// is a wiring mistake that stops the start rather than a group that silently drops events.
func TestConsumeRefusesAConsumerWithoutOneHandler(t *testing.T) {
	t.Parallel()
	one := func(context.Context, events.Event) error { return nil }
	batch := func(context.Context, []events.Event) error { return nil }
	for name, c := range map[string]Consumer{
		"no handler": {Group: "g", Topics: []string{"t"}},
		"both":       {Group: "g", Topics: []string{"t"}, Handle: one, Batch: batch},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Consume accepted it", name)
				}
			}()
			(&Base{}).Consume(c)
		}()
	}
}
