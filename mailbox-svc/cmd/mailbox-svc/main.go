// Command mailbox-svc serves public message ingress, mailboxes, threads and sender blocks.
package main

import (
	"github.com/svcdev/svc/mailbox-svc/app"
	"github.com/svcdev/svc/pkg/server"
)

func main() { server.Main(app.Name, app.New) }
