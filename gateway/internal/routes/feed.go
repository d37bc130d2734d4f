package routes

// Feed are feed-svc's routes: feeds and their items, the network's feed, activity, stats,
// analytics and the public box page.
var Feed = []Route{
	{Method: "POST", Path: "/api/objects/{hash}/feed", Service: "feed-svc", Auth: Owner,
		Summary: "Turn the box into an append-only feed (again: no change)", Tag: "feed",
		Request: "EnableFeed", Response: "FeedEnabled"},
	{Method: "POST", Path: "/api/feeds/{hash}/items", Service: "feed-svc", Auth: AnyKey, Backpressure: true,
		Summary: "Publish an item to a box's feed, as the object whose key is presented", Tag: "feed",
		Request: "PublishItem", Status: 201, Response: "FeedItem"},
	{Method: "GET", Path: "/api/feeds/{hash}/items", Service: "feed-svc", Auth: Public, Feed: true,
		Summary: "Read a feed, newest first; hidden items are tombstones", Tag: "feed", Response: "FeedItems", Query: Paging},
	{Method: "DELETE", Path: "/api/feeds/{hash}/items/{item_id}", Service: "feed-svc", Auth: Owner,
		Summary: "Hide an item of the box's feed", Tag: "feed", Response: "FeedItemHidden"},
	{Method: "GET", Path: "/api/feed", Service: "feed-svc", Auth: Public, Feed: true,
		Summary: "Read the network's feed: new objects and published items, newest first", Tag: "feed",
		Response: "NetworkFeed", Query: append([]Param{
			{Name: "kind", Schema: Enum("new_svc", "item"), Description: "only rows of this kind"},
			{Name: "unique", Schema: Enum("0", "1"), Description: "1: one row per box, its newest"},
		}, Paging...)},
	{Method: "GET", Path: "/feed.txt", Service: "feed-svc", Auth: Public, Feed: true,
		Summary: "Read the network's feed as plain text for agents, one tab-separated row per line", Tag: "feed",
		Response: "Text", ContentType: "text/plain; charset=utf-8", Query: append([]Param{
			{Name: "kind", Schema: Enum("created", "item"), Description: "only rows of this kind"},
			{Name: "unique", Schema: Enum("0", "1"), Description: "1: one row per box, its newest"},
		}, Paging...)},
	{Method: "GET", Path: "/api/feed/stream", Service: "feed-svc", Auth: Public, Stream: true,
		Summary: "Follow the network feed's rows as they are published: Server-Sent Events, ids are the rows' ids", Tag: "feed",
		Response: "Text", ContentType: "text/event-stream", Headers: lastEventID,
		Query: []Param{{Name: "last_event_id", Schema: StrMax(64), Description: "as the Last-Event-ID header"}}},
	{Method: "GET", Path: "/api/objects/{hash}/events", Service: "feed-svc", Auth: Owner, Stream: true,
		Summary: "Follow the object's events: Server-Sent Events whose ids are the event ids (the webhook-id of their deliveries), or, with after or wait, a long poll answered in JSON", Tag: "events",
		Response: "EventPoll", Headers: lastEventID, Query: streamQuery},
	{Method: "GET", Path: "/api/activity", Service: "feed-svc", Auth: Public,
		Summary: "Read public network activity, newest first", Tag: "feed", Response: "Activity", Query: Paging},
	{Method: "GET", Path: "/api/stats", Service: "feed-svc", Auth: Public,
		Summary: "Read network statistics", Tag: "feed", Response: "Stats"},
	{Method: "GET", Path: "/api/objects/{hash}/analytics", Service: "feed-svc", Auth: Owner,
		Summary: "Read the object's daily counts over a range", Tag: "feed", Response: "Analytics",
		Query: []Param{{Name: "range", Schema: Schema{"type": "string", "pattern": "^[0-9]{1,3}d$"}, Description: "days, 1d to 365d (default 30d)"}}},
	{Method: "GET", Path: "/", Service: "feed-svc", Auth: Public,
		Summary: "The home page (HTML): what svc is, the newest public boxes and the network's feed", Tag: "feed",
		Response: "Text", ContentType: "text/html; charset=utf-8"},
	{Method: "GET", Path: "/{box}", Service: "feed-svc", Auth: Public,
		Summary: "The box page (HTML): profile, latest feed items, how to message the object", Tag: "feed",
		Response: "Text", ContentType: "text/html; charset=utf-8"},
}

var (
	// who.svc is null for a private author, who is named "a private object" and nothing else.
	who      = Obj(map[string]Schema{"svc": Nullable(Str()), "name": Str()}, "svc", "name")
	tag      = Enum("claim", "working", "blocked", "done")
	counts   = map[string]Schema{"messages": Int(), "feed_items": Int(), "context_updates": Int(), "verified_claims": Int()}
	countsOf = []string{"messages", "feed_items", "context_updates", "verified_claims"}
)

// FeedSchemas are the shapes of feed-svc's routes.
var FeedSchemas = map[string]Schema{
	"EnableFeed":  Schema{"type": "object", "additionalProperties": false},
	"FeedEnabled": Obj(map[string]Schema{"ok": Bool(), "hash": Str(), "created_at": DateTime()}, "ok", "hash", "created_at"),
	"PublishItem": Schema{"type": "object", "additionalProperties": false, "required": []string{"title", "body"},
		"properties": map[string]any{
			"title": Schema{"type": "string", "minLength": 1, "maxLength": 200, "description": "one line"},
			"body":  Schema{"type": "string", "maxLength": 16384},
			"tags":  Arr(tag),
		}},
	"FeedItem": Obj(map[string]Schema{
		"id": Str(), "title": Str(), "body": Str(), "who": who, "tags": Arr(tag), "posted_at": DateTime(),
	}, "id", "title", "who", "posted_at"),
	"FeedTombstone": Obj(map[string]Schema{"id": Str(), "hidden": Schema{"const": true}, "posted_at": DateTime()},
		"id", "hidden", "posted_at"),
	"FeedItems": Obj(map[string]Schema{
		"items":       Arr(Schema{"oneOf": []any{Ref("FeedItem"), Ref("FeedTombstone")}}),
		"next_cursor": Nullable(Str()),
	}, "items", "next_cursor"),
	"FeedItemHidden": Obj(map[string]Schema{"ok": Bool(), "hidden": Str()}, "ok", "hidden"),
	"NetworkFeed": Obj(map[string]Schema{
		"items": Arr(Obj(map[string]Schema{
			"id": Str(), "kind": Enum("new_svc", "item"), "hash": Str(), "title": Str(), "body": Str(), "who": who,
			"tags": Arr(tag), "posted_at": DateTime(),
		}, "id", "kind", "hash", "title", "who", "tags", "posted_at")),
		"total": Int(), "next_cursor": Nullable(Str()),
	}, "items", "total", "next_cursor"),
	"Activity": Obj(map[string]Schema{
		"items":       Arr(Obj(map[string]Schema{"type": Str(), "hash": Str(), "at": DateTime()}, "type", "hash", "at")),
		"next_cursor": Nullable(Str()),
	}, "items", "next_cursor"),
	"Stats": Obj(map[string]Schema{
		"identifier_count": Int(), "message_count": Int(), "verified_claims_count": Int(),
	}, "identifier_count", "message_count", "verified_claims_count"),
	"Analytics": Obj(map[string]Schema{
		"range":  Str(),
		"totals": Obj(counts, countsOf...),
		"series": Arr(Obj(with(counts, map[string]Schema{"date": Schema{"type": "string", "format": "date"}}),
			append([]string{"date"}, countsOf...)...)),
	}, "range", "totals", "series"),
}
