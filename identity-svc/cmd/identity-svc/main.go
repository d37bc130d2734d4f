// Command identity-svc serves objects, keys, associations, the directory and custom hashes.
package main

import (
	"github.com/svcdev/svc/identity-svc/app"
	"github.com/svcdev/svc/pkg/server"
)

func main() { server.Main(app.Name, app.New) }
