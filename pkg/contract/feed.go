package contract

// FeedItemPublishedData is the data of a feed.item_published event (topic svc.feed.v1, webhook
// event context_updated). The envelope's object is the box whose feed received the item; the
// author is the object whose key published it. A private author is named by nothing: no object
// id, a null hash and the name PrivateAuthorName, so that the event and every webhook payload
// made of it are as anonymous as the public reads.
type FeedItemPublishedData struct {
	ItemID         string   `json:"item_id"`
	Title          string   `json:"title"`
	Body           string   `json:"body"`
	Tags           []string `json:"tags"`
	AuthorObjectID string   `json:"author_object_id,omitempty"`
	AuthorHash     *string  `json:"author_hash"`
	AuthorName     string   `json:"author_name"`
	PostedAt       string   `json:"posted_at"`
}

// PrivateAuthorName is the name that public reads and events show for a private author.
const PrivateAuthorName = "a private object"

// The keys of the feed validators (httpx.FeedTags), shared by feed-svc, whose writes and
// projections retire them, and the gateway, which answers revalidations from them.
const NetworkFeed = "network" // the network's feed (GET /api/feed and /feed.txt)

// BoxFeed is the key of a box's feed (GET /api/feeds/{hash}/items).
func BoxFeed(objectID string) string { return "box:" + objectID }
