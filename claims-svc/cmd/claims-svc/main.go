// Command claims-svc serves claims of ownership: challenges, their verification over DNS and
// public pages, and their periodic re-verification.
package main

import (
	"github.com/svcdev/svc/claims-svc/app"
	"github.com/svcdev/svc/pkg/server"
)

func main() { server.Main(app.Name, app.New) }
