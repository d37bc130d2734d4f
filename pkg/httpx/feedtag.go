package httpx

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/versions"
)

// FeedTags are the validators of polled feed reads (a box's feed, the network's feed and its
// text): one token per feed in Redis, replaced by every write that changes what the feed shows,
// so that both feed-svc and the gateway can answer a revalidation with 304, or refuse an early
// poll, without any store read. A feed read's ETag is its feed's token with a digest of the
// request's path and query: each page, limit and kind has its own validator, under the one token.
type FeedTags struct{ tokens *versions.Tokens }

// FeedTagTTL bounds how long a validator lives: what a feed shows can change without a write to
// it (an author's hash in a box's feed), and such a change is seen within this time at the latest.
const FeedTagTTL = time.Hour

// NewFeedTags returns the feed validators kept in rdb.
func NewFeedTags(rdb *redis.Client, log *slog.Logger) *FeedTags {
	return &FeedTags{tokens: versions.New(rdb, log, "svc:feedtag:", FeedTagTTL)}
}

// NetworkFeed is contract.NetworkFeed, the feed key of the network's feed.
const NetworkFeed = contract.NetworkFeed

// BoxFeed is contract.BoxFeed, the feed key of a box's feed.
func BoxFeed(objectID string) string { return contract.BoxFeed(objectID) }

// Changed replaces a feed's token; a writer calls it after its store write.
func (f *FeedTags) Changed(ctx context.Context, feed string) { f.tokens.Changed(ctx, feed) }

// ETag returns the validator of a read of feed: create says whether to make a token when there is
// none (a reader about to read the store does; a check that only may answer 304 does not).
func (f *FeedTags) ETag(ctx context.Context, feed string, r *http.Request, create bool) (string, error) {
	token := f.tokens.Peek
	if create {
		token = f.tokens.Current
	}
	tok, err := token(ctx, feed)
	if err != nil {
		return "", err
	}
	// The query is normalised (keys sorted) so that a client reordering it keeps its validator.
	sum := sha256.Sum256([]byte(r.URL.Path + "?" + r.URL.Query().Encode()))
	return `"` + tok + "." + hex.EncodeToString(sum[:8]) + `"`, nil
}
