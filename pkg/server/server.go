// Package server runs an HTTP service and its background loops with graceful shutdown, and
// mounts the probes and metrics every service serves.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"
)

// NewLogger returns a JSON logger at level (debug, info, warn, error), tagged with the service
// unless it is empty.
func NewLogger(level, service string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		l = slog.LevelInfo
	}
	log := slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{Level: l}))
	if service != "" {
		log = log.With("service", service)
	}
	return log
}

// Check is one readiness check.
type Check func(ctx context.Context) error

// Problem is a check's error whose message /readyz shows as it is, in place of "unreachable":
// it names what is wrong and carries nothing secret. A Warning one does not fail readiness.
type Problem struct {
	Message string
	Warning bool
}

func (p *Problem) Error() string { return p.Message }

// MountProbes adds /healthz (the process is up), /readyz (every check passes; warnings are
// listed without failing it) and /metrics.
func MountProbes(e *gin.Engine, reg *prometheus.Registry, checks map[string]Check) {
	e.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	e.GET("/readyz", func(c *gin.Context) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
		defer cancel()
		failed, warnings := gin.H{}, gin.H{}
		for name, check := range checks {
			err := check(ctx)
			var p *Problem
			switch {
			case err == nil:
			case errors.As(err, &p) && p.Warning:
				warnings[name] = p.Message
			case errors.As(err, &p):
				failed[name] = p.Message
			default:
				failed[name] = "unreachable"
			}
		}
		body := gin.H{"status": "ok"}
		if len(warnings) > 0 {
			body["warnings"] = warnings
		}
		if len(failed) > 0 {
			body["status"], body["checks"] = "unavailable", failed
			c.JSON(http.StatusServiceUnavailable, body)
			return
		}
		c.JSON(http.StatusOK, body)
	})
	e.GET("/metrics", gin.WrapH(promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})))
}

// Serve serves h on ln and runs the background loops until ctx ends or one of them fails. Then
// it stops accepting, drains in-flight requests for up to drain, and only then stops the loops:
// the outbox relay still publishes the events of the requests that finished during the drain.
// The caller closes the producer after Serve returns, flushing what the relay handed it last.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, drain time.Duration, log *slog.Logger, loops ...func(context.Context) error) error {
	log.Info("serving", "addr", ln.Addr().String())
	defer log.Info("stopped")
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	g, gctx := errgroup.WithContext(ctx)
	loopCtx, stopLoops := context.WithCancel(context.WithoutCancel(ctx))
	defer stopLoops()
	g.Go(func() error {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("http serve: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), drain)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			log.Warn("http drain incomplete", "error", err)
		}
		stopLoops()
		return nil
	})
	for _, loop := range loops {
		g.Go(func() error { return loop(loopCtx) })
	}
	return g.Wait()
}

// Run listens on addr and serves there with serve (a binary's Serve): the Run of every binary.
func Run(ctx context.Context, addr string, serve func(context.Context, net.Listener) error) error {
	ln, err := Listen(addr)
	if err != nil {
		return err
	}
	return serve(ctx, ln)
}

// Listen opens a TCP listener on addr.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}
