// Command webhook-svc serves owner webhooks and context subscriptions and delivers their events.
package main

import (
	"github.com/svcdev/svc/pkg/server"
	"github.com/svcdev/svc/webhook-svc/app"
)

func main() { server.Main(app.Name, app.New) }
