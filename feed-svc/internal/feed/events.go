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
		published(it))
}

// published is the data of an item's event; a private author is named by nothing.
func published(it *store.Item) contract.FeedItemPublishedData {
	d := contract.FeedItemPublishedData{ItemID: it.ID, Title: it.Title, Body: it.Body, Tags: it.Tags,
		PostedAt: clock.Format(it.PostedAt), AuthorName: contract.PrivateAuthorName}
	if !it.AuthorPrivate {
		hash := it.AuthorHash
		d.AuthorObjectID, d.AuthorHash, d.AuthorName = it.AuthorID, &hash, it.AuthorName
	}
	return d
}
