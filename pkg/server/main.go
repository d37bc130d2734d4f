package server

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/svcdev/svc/pkg/config"
)

// App is a service that runs until its context ends and then releases its connections.
type App interface {
	Run(ctx context.Context) error
	Close()
}

// Main is the whole main function of a service binary: it loads the typed configuration C from
// the environment, builds the app, runs it until SIGINT or SIGTERM, and exits non-zero on error.
func Main[C any, A App](name string, newApp func(context.Context, C, *slog.Logger) (A, error)) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, newApp)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

func run[C any, A App](ctx context.Context, newApp func(context.Context, C, *slog.Logger) (A, error)) error {
	var cfg C
	if err := config.Load(ctx, &cfg); err != nil {
		return err
	}
	a, err := newApp(ctx, cfg, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	return a.Run(ctx)
}
