package feed

import (
	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// Every event feed-svc publishes is built here.

// itemPublished is feed.item_published (webhook event context_updated) of the box whose feed
// received the item.
func itemPublished(boxID, boxHash, requestID string, it *store.Item) (events.Pending, error) {
	return events.New(events.TopicFeed, events.FeedItemPublished, boxID, boxHash, requestID,
		contract.FeedItemPublishedData{
			ItemID: it.ID, Title: it.Title, Body: it.Body, Tags: it.Tags,
			AuthorObjectID: it.AuthorID, AuthorHash: it.AuthorHash, AuthorName: it.AuthorName,
			PostedAt: clock.Format(it.PostedAt),
		})
}
