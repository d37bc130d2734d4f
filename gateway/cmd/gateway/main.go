// Command gateway is svc's public entry point: it authenticates keys, applies rate limits and
// forwards each route of the table to its service with an internal token.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/svcdev/svc/gateway/app"
	"github.com/svcdev/svc/pkg/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := realMain(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
}

func realMain(ctx context.Context) error {
	var cfg app.Config
	if err := config.Load(ctx, &cfg); err != nil {
		return err
	}
	a, err := app.New(ctx, cfg, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	return a.Run(ctx)
}
