package service

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/freshness"
)

// measureLag makes the lag measure of consumer group id ("<service>.<group>"): exported as the
// gauge svc_consumer_lag_seconds{service, group} and reported to the gateway. The first group
// starts the reporting loop.
func (b *Base) measureLag(id, group string) *events.Lag {
	lag := events.NewLag()
	if len(b.lags) == 0 {
		b.Go(b.reportLag)
	}
	b.lags[id] = lag
	b.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "svc_consumer_lag_seconds",
		Help:        "Age of the consumer group's oldest unhandled event in this process (0 when caught up): how long a write takes to reach the group's projection.",
		ConstLabels: prometheus.Labels{"service": b.Name, "group": group},
	}, func() float64 { return lag.Age(time.Now()).Seconds() }))
	return lag
}

// reportLag reports the groups' lag to the shared Redis every freshness.Interval until ctx ends,
// and withdraws this replica's reports then, so that the gateway stops counting them at once.
func (b *Base) reportLag(ctx context.Context) error {
	r := freshness.NewReporter(b.Redis)
	ids := slices.Collect(maps.Keys(b.lags))
	defer func() {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = r.Withdraw(wctx, ids)
	}()
	t := time.NewTicker(freshness.Interval)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		now := time.Now()
		lags := make(map[string]time.Duration, len(b.lags))
		for id, lag := range b.lags {
			lags[id] = lag.Age(now)
		}
		err := r.Report(ctx, lags, now)
		if err != nil && !failing && ctx.Err() == nil {
			b.Log.Warn("reporting consumer lag failed", "error", err)
		}
		failing = err != nil
	}
}
