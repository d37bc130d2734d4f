// Command gateway is svc's public entry point: it authenticates keys, applies rate limits and
// forwards each route of the table to its service with an internal token.
package main

import (
	"github.com/svcdev/svc/gateway/app"
	"github.com/svcdev/svc/pkg/server"
)

func main() { server.Main(app.Name, app.New) }
