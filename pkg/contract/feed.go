package contract

// FeedItemPublishedData is the data of a feed.item_published event (topic svc.feed.v1, webhook
// event context_updated). The envelope's object is the box whose feed received the item; the
// author is the object whose key published it.
type FeedItemPublishedData struct {
	ItemID         string   `json:"item_id"`
	Title          string   `json:"title"`
	Body           string   `json:"body"`
	Tags           []string `json:"tags"`
	AuthorObjectID string   `json:"author_object_id"`
	AuthorHash     string   `json:"author_hash"`
	AuthorName     string   `json:"author_name"`
	PostedAt       string   `json:"posted_at"`
}
