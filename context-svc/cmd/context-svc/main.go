// Command context-svc serves public profiles (llm.txt), context versions, sources, context
// links, rules, repository sync, the context coach, decision memory and agent cards.
package main

import (
	"github.com/svcdev/svc/context-svc/app"
	"github.com/svcdev/svc/pkg/server"
)

func main() { server.Main(app.Name, app.New) }
