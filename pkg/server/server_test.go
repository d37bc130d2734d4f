package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/server"
)

// TestServeStopsLoopsAfterTheDrain cancels a server while a request is in flight: the request
// completes, and only then do the background loops see their context end, so that the outbox
// relay still publishes the events of requests that finished during the drain.
func TestServeStopsLoopsAfterTheDrain(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	inFlight, release := make(chan struct{}), make(chan struct{})
	var answered, loopStopped atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(inFlight)
		<-release
		answered.Store(time.Now().UnixNano())
		_, _ = io.WriteString(w, "ok")
	})
	loop := func(ctx context.Context) error {
		<-ctx.Done()
		loopStopped.Store(time.Now().UnixNano())
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- server.Serve(ctx, ln, h, 10*time.Second, slog.New(slog.DiscardHandler), loop) }()

	got := make(chan error, 1)
	go func() {
		res, err := http.Get("http://" + ln.Addr().String())
		if err == nil {
			_, err = io.ReadAll(res.Body)
			res.Body.Close()
		}
		got <- err
	}()
	<-inFlight
	cancel()
	time.Sleep(200 * time.Millisecond) // the drain has begun; the loop must still run
	if loopStopped.Load() != 0 {
		t.Fatal("the background loop stopped while a request was still draining")
	}
	close(release)
	if err := <-got; err != nil {
		t.Fatalf("the in-flight request failed: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if stopped := loopStopped.Load(); stopped == 0 || stopped < answered.Load() {
		t.Errorf("loop stopped at %d, request answered at %d: want the loop to stop after the drain", stopped, answered.Load())
	}
}
