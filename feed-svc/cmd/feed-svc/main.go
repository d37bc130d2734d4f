// Command feed-svc serves feeds, the network's feed and feed.txt, activity, stats, analytics and
// the public box page.
package main

import (
	"github.com/svcdev/svc/feed-svc/app"
	"github.com/svcdev/svc/pkg/server"
)

func main() { server.Main(app.Name, app.New) }
