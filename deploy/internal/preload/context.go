package preload

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
)

// ContextObject is what Contexts stores for one object.
type ContextObject struct {
	ObjectID                            string
	Sources, Links, Decisions, Versions int
	// From numbers the sources, links and decisions, so that growing an object twice adds new ones.
	From int
}

// maxSources is context-svc's limit of sources per object.
const maxSources = 100

// Contexts stores in context-svc's database db, for each object, as its writes leave them
// (context-svc's store): text sources in the slots after those it holds and on its list, links
// and decisions on their lists, and context versions after its current one (each a copy of it
// with a new llm.txt), the object's first version made when it has none. An object must not be
// written by anything else while it is loaded.
func Contexts(ctx context.Context, db *mongo.Database, objects []ContextObject) error {
	for _, o := range objects {
		if o.From+o.Sources > maxSources {
			return fmt.Errorf("preload %s: more than %d sources", o.ObjectID, maxSources)
		}
		if err := contextLists(ctx, db, o); err != nil {
			return fmt.Errorf("preload %s: %w", o.ObjectID, err)
		}
		if err := contextVersions(ctx, db, o); err != nil {
			return fmt.Errorf("preload %s: %w", o.ObjectID, err)
		}
	}
	return nil
}

// contextLists stores the object's sources, links and decisions.
func contextLists(ctx context.Context, db *mongo.Database, o ContextObject) error {
	srcScope := mongox.Scope(o.ObjectID, "src")
	held, err := mongox.Find[bson.Raw](ctx, db.Collection("object_ranges"), mongox.Range{Scope: srcScope, Limit: maxSources})
	if err != nil {
		return err
	}
	now := clock.Now()
	var slots, sources, links, ranges []any
	for i := range o.Sources {
		id := fmt.Sprintf("src_%s_%d", o.ObjectID, o.From+i)
		slot := len(held) + i + 1
		slots = append(slots, bson.D{{Key: "_id", Value: o.ObjectID + ":" + strconv.Itoa(slot)}, {Key: "object_id", Value: o.ObjectID}, {Key: "source_id", Value: id}})
		sources = append(sources, bson.D{{Key: "_id", Value: id}, {Key: "object_id", Value: o.ObjectID}, {Key: "kind", Value: "text"},
			{Key: "title", Value: "Source " + id}, {Key: "text", Value: "Preloaded text of " + id}, {Key: "created_at", Value: now}, {Key: "slot", Value: slot}})
		ranges = append(ranges, bson.D{{Key: "_id", Value: srcScope + mongox.IDPart(id)}, {Key: "v", Value: id}})
	}
	for i := range o.Links {
		id := fmt.Sprintf("lnk_%s_%d", o.ObjectID, o.From+i)
		link := bson.D{{Key: "_id", Value: id}, {Key: "object_id", Value: o.ObjectID}, {Key: "title", Value: "Link"}, {Key: "note", Value: ""},
			{Key: "source_ids", Value: bson.A{fmt.Sprintf("src_%s_%d", o.ObjectID, o.From)}}, {Key: "created_at", Value: now}}
		links = append(links, link)
		ranges = append(ranges, bson.D{{Key: "_id", Value: mongox.Key(o.ObjectID, "lnk", mongox.IDPart(id))}, {Key: "v", Value: link}})
	}
	for i := range o.Decisions {
		node := fmt.Sprintf("node_%d", o.From+i)
		ranges = append(ranges, bson.D{{Key: "_id", Value: mongox.Key(o.ObjectID, "dec", mongox.Time(now), mongox.IDPart(node))},
			{Key: "v", Value: bson.D{{Key: "_id", Value: o.ObjectID + ":" + node}, {Key: "object_id", Value: o.ObjectID}, {Key: "thread_id", Value: "thr_preload"},
				{Key: "node_id", Value: node}, {Key: "title", Value: "Decision"}, {Key: "body", Value: "Decided in preload"}, {Key: "confidence", Value: nil},
				{Key: "created_at", Value: now}}}})
	}
	// The slots first, as a create takes its slot before it stores the source.
	if err := insertAll(ctx, db, map[string][]any{"source_slots": slots}); err != nil {
		return err
	}
	return insertAll(ctx, db, map[string][]any{"object_ranges": ranges, "sources": sources, "links": links})
}

// contextVersions adds o.Versions versions after the object's current one, making its first
// version (as the object.created consumer does) when it has none, and moves its head hint.
func contextVersions(ctx context.Context, db *mongo.Database, o ContextObject) error {
	if o.Versions == 0 {
		return nil
	}
	versions := db.Collection("versions")
	var head struct {
		Version int `bson:"version"`
	}
	if err := mongox.FindOne(ctx, db.Collection("heads"), mongox.ByID(o.ObjectID), &head); err != nil && !errors.Is(err, mongox.ErrNotFound) {
		return err
	}
	// The current version: the hint's, or a later one its writer had not moved the hint to.
	var cur bson.M
	for v := max(head.Version, 1); ; v++ {
		var p bson.M
		err := mongox.FindOne(ctx, versions, mongox.ByID(o.ObjectID+":"+strconv.Itoa(v)), &p)
		if errors.Is(err, mongox.ErrNotFound) {
			break
		}
		if err != nil {
			return err
		}
		cur = p
	}
	if cur == nil {
		text := "# Preloaded\n"
		cur = bson.M{"_id": o.ObjectID + ":1", "object_id": o.ObjectID, "version": 1, "change": "created", "updated_at": clock.Now(),
			"llm_txt": text, "title": contract.ProfileTitle(text), "rules": nil, "included": bson.A{}, "memory": "", "memory_version": 0}
		if err := insertAll(ctx, db, map[string][]any{"versions": {cur}}); err != nil {
			return err
		}
	}
	first := versionOf(cur["version"]) + 1
	docs := make([]any, o.Versions)
	for i := range docs {
		p := maps.Clone(cur)
		delete(p, "_events")
		v := first + i
		p["_id"], p["version"], p["change"], p["llm_txt"] = o.ObjectID+":"+strconv.Itoa(v), v, "llm_txt", fmt.Sprintf("# Preloaded\n\nVersion %d.\n", v)
		docs[i] = p
	}
	if err := insertAll(ctx, db, map[string][]any{"versions": docs}); err != nil {
		return err
	}
	return mongox.Upsert(ctx, db.Collection("heads"), o.ObjectID, bson.D{{Key: "$max", Value: bson.D{{Key: "version", Value: first + o.Versions - 1}}}})
}

// versionOf reads a stored version number, whichever integer type it came back as.
func versionOf(v any) int {
	switch n := v.(type) {
	case int32:
		return int(n)
	case int64:
		return int(n)
	case int:
		return n
	}
	return 0
}
