// Command identity-svc serves objects, keys, associations, the directory and custom hashes.
//
//	identity-svc                       serve
//	identity-svc reseal-signing-keys   seal every signing key svc holds under SIGNING_KEYS_SECRET
//
// The subcommand reads the service's own settings (MONGO_URI, MONGO_DATABASE,
// SIGNING_KEYS_SECRET, SIGNING_KEYS_SECRETS_OLD), so it runs in the service's image and pod.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/svcdev/svc/identity-svc/app"
	"github.com/svcdev/svc/pkg/config"
	"github.com/svcdev/svc/pkg/server"
)

func main() {
	if len(os.Args) > 1 {
		if os.Args[1] != app.ResealCommand {
			fmt.Fprintf(os.Stderr, "usage: %s [%s]\n", app.Name, app.ResealCommand)
			os.Exit(2)
		}
		if err := reseal(); err != nil {
			fmt.Fprintf(os.Stderr, "%s %s: %v\n", app.Name, app.ResealCommand, err)
			os.Exit(1)
		}
		return
	}
	server.Main(app.Name, app.New)
}

func reseal() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var cfg app.ResealConfig
	if err := config.Load(ctx, &cfg); err != nil {
		return err
	}
	_, err := app.Reseal(ctx, cfg, server.NewLogger("info", app.Name))
	return err
}
