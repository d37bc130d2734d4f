package contract

// ThreadSourceChangedData is the data of graph-svc's context.source_changed event (webhook event
// context_source): a tracked source of a thread whose text was read for the first time (change
// "added") or changed ("changed"). The envelope's object is the source's owner.
type ThreadSourceChangedData struct {
	SourceID string `json:"source_id"`
	ThreadID string `json:"thread_id"`
	Kind     string `json:"kind"`
	URL      string `json:"url"`
	NodeID   string `json:"node_id"`
	Change   string `json:"change"`
	PulledAt string `json:"pulled_at"`
}
