package httpx

import "time"

// UpstreamTimeout is how long the gateway waits for a service's answer before it answers 503
// itself. A service whose request may write and then run long (an ingest fetching pages) bounds
// its work well inside it, so that a client is never told 503 for a write that happened.
const UpstreamTimeout = 30 * time.Second
