package store

import "time"

// Edge is an edge of a thread's graph, appended once to the thread's graph list and never changed.
type Edge struct {
	ID         string    `bson:"_id"`
	ThreadID   string    `bson:"thread_id"`
	From       string    `bson:"from_node_id"`
	To         string    `bson:"to_node_id"`
	Type       string    `bson:"type"`
	AuthorID   string    `bson:"author_id"`
	AuthorHash string    `bson:"author_hash"`
	MessageID  string    `bson:"message_id,omitempty"`
	SourceID   string    `bson:"source_id,omitempty"`
	CreatedAt  time.Time `bson:"created_at"`
	// Private is the author of an owner_only node the edge joins: only that author sees it.
	Private string `bson:"private,omitempty"`
}
