// Command graph-svc serves the memory of each relationship: the graph of a thread, decisions,
// private guidance, tracked thread sources and ingest.
package main

import (
	"github.com/svcdev/svc/graph-svc/app"
	"github.com/svcdev/svc/pkg/server"
)

func main() { server.Main(app.Name, app.New) }
