// Package app wires graph-svc: configuration, storage, the mailbox client, events and routes. It
// is public (not internal) so that the all-in-one mode can run the service in-process with the
// same wiring.
package app

import (
	"context"
	"errors"
	"log/slog"

	"github.com/svcdev/svc/graph-svc/internal/api"
	"github.com/svcdev/svc/graph-svc/internal/consumers"
	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/config"
	"github.com/svcdev/svc/pkg/rpc"
	"github.com/svcdev/svc/pkg/service"
)

// Name is the service name: its audience for internal tokens and its default database.
const Name = "graph-svc"

// Config is graph-svc's configuration.
type Config struct {
	config.Service
	// MailboxURL is the internal address of mailbox-svc, asked who takes part in a thread.
	MailboxURL string `env:"MAILBOX_URL"`
}

// App is a running graph-svc: the shared service base (Serve, Run, Close) with its routes and
// its consumer.
type App struct{ *service.Base }

// New connects to the backends and builds the service.
func New(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	if cfg.MailboxURL == "" {
		return nil, errors.New("configuration: MAILBOX_URL is required")
	}
	b, err := service.New(ctx, Name, cfg.Service, log, service.Options{Indexes: store.Indexes})
	if err != nil {
		return nil, err
	}
	svc := &graph.Service{
		Store: store.New(b.DB), Mailbox: rpc.NewMailboxClient(cfg.MailboxURL, b.Client("mailbox-svc")), Outbox: b.Outbox, Log: b.Log,
	}
	api.Register(b.API, &api.Handler{Graph: svc})
	b.Consume(consumers.Group, consumers.Topics, (&consumers.Messages{Graph: svc}).Handle)
	return &App{Base: b}, nil
}
