package preload

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/mongox"
)

// GraphSchedule is graph-svc's re-pull schedule (GRAPH_PULL_INTERVAL, GRAPH_PULL_SCAN), which
// places a source in the due bucket of its next pull.
type GraphSchedule struct{ Interval, Scan time.Duration }

// graphSourcesPerOwner is graph-svc's default quota of tracked sources per owner.
const graphSourcesPerOwner = 200

// GraphSources stores tracked sources of urls in the owner's self-ingest thread, in graph-svc's
// database db, as an ingest whose first pull failed with pullErr leaves them (graph-svc's store,
// lists.go and sources.go): the self thread and its entry in the owner's threads when it has
// none, a slot of the owner's source quota per source while one is free (a preload stores every
// source it is given), the source, its entry in the thread's sources and in the due bucket of
// its next pull, and the failed pull with the source's state after it. The owner's sources must
// not be written by anything else meanwhile.
func GraphSources(ctx context.Context, db *mongo.Database, ownerID, ownerHash string, urls []string, pullErr string, sch GraphSchedule) error {
	now := clock.Now()
	thread := "ths_" + ownerID
	lists := db.Collection("lists")
	var listDocs, sources, pulls []any
	added, err := mongox.InsertNew(ctx, db.Collection("threads"), []bson.D{{{Key: "_id", Value: thread},
		{Key: "participants", Value: bson.A{ownerID}}, {Key: "self", Value: true}, {Key: "owner_id", Value: ownerID}, {Key: "created_at", Value: now}}})
	if err != nil {
		return fmt.Errorf("preload graph threads: %w", err)
	}
	if added[0] {
		listDocs = append(listDocs, listDoc(mongox.Key("t", ownerID, mongox.Time(now), thread), now, thread))
	}
	quota := mongox.Scope("q", "~"+hex.EncodeToString([]byte("quota:sources:"+ownerID)))
	held, err := mongox.Find[bson.Raw](ctx, lists, mongox.Range{Scope: quota, Desc: true, Limit: 1})
	if err != nil {
		return fmt.Errorf("preload graph quota: %w", err)
	}
	used := int64(0)
	if len(held) > 0 {
		if used, err = mongox.ParseSeq(held[0].Lookup("_id").StringValue()[len(quota):]); err != nil {
			return fmt.Errorf("preload graph quota: %w", err)
		}
	}
	for _, u := range urls {
		id := apikey.NewID("src")
		if used < graphSourcesPerOwner {
			used++
			listDocs = append(listDocs, listDoc(quota+mongox.Seq(used), now, id))
		}
		src := bson.D{{Key: "_id", Value: id}, {Key: "thread_id", Value: thread}, {Key: "owner_id", Value: ownerID},
			{Key: "owner_hash", Value: ownerHash}, {Key: "kind", Value: "url"}, {Key: "url", Value: u}, {Key: "fetch_url", Value: u},
			{Key: "visibility", Value: "participants"}, {Key: "created_at", Value: now}}
		due := now.Add(sch.Interval)
		pull := bson.D{{Key: "_id", Value: apikey.NewID("pul")}, {Key: "source_id", Value: id}, {Key: "at", Value: now},
			{Key: "status", Value: "error"}, {Key: "error", Value: pullErr}}
		sources, pulls = append(sources, src), append(pulls, pull)
		listDocs = append(listDocs,
			listDoc(mongox.Key("s", thread, mongox.Time(now), id), now, src),
			listDoc(mongox.Key("d", mongox.Time(due.Truncate(sch.Scan)), mongox.Time(due), id), due,
				bson.D{{Key: "source_id", Value: id}, {Key: "at", Value: due}}),
			listDoc(mongox.Key("u", id, mongox.Time(now), pull[0].Value.(string)), now,
				bson.D{{Key: "latest", Value: pull}, {Key: "latest_error", Value: pull}}))
	}
	return insertAll(ctx, db, map[string][]any{"sources": sources, "source_pulls": pulls, "lists": listDocs})
}

// listDoc is a document of graph-svc's lists: its key, its time and its value.
func listDoc(id string, at time.Time, v any) bson.D {
	return bson.D{{Key: "_id", Value: id}, {Key: "at", Value: at}, {Key: "v", Value: v}}
}
