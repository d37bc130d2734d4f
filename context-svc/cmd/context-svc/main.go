// Command context-svc serves public profiles (llm.txt), context versions, sources, context
// links, rules, repository sync, the context coach, decision memory and agent cards.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/svcdev/svc/context-svc/app"
	"github.com/svcdev/svc/pkg/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := realMain(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "context-svc:", err)
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
