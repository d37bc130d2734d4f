package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/context-svc/internal/profile"
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
)

// PreloadObject is what Preload stores for one object.
type PreloadObject struct {
	ObjectID                            string
	Sources, Links, Decisions, Versions int
	// From numbers the sources, links and decisions, so that growing an object twice adds new ones.
	From int
}

// Preload grows context-svc's store at db through the service's own store code, in bulk
// (store.LoadSources and the other Load functions: a few inserts of many documents per object):
// each object's text sources in its slots and list (at most profile.MaxSources), links, decisions
// and context versions. It is for benchmarks that measure reads at a given size (deploy/e2e's
// scale benchmark); an object must not be written by anything else while it is loaded.
func Preload(ctx context.Context, db *mongo.Database, objects []PreloadObject) error {
	st := store.New(db, slog.New(slog.DiscardHandler))
	for _, o := range objects {
		if o.From+o.Sources > profile.MaxSources {
			return fmt.Errorf("preload %s: more than %d sources", o.ObjectID, profile.MaxSources)
		}
		now := clock.Now()
		srcs := make([]store.Source, o.Sources)
		for i := range srcs {
			id := fmt.Sprintf("src_%s_%d", o.ObjectID, o.From+i)
			srcs[i] = store.Source{ID: id, ObjectID: o.ObjectID, Kind: profile.KindText, Title: "Source " + id,
				Text: "Preloaded text of " + id, CreatedAt: now}
		}
		links := make([]store.Link, o.Links)
		for i := range links {
			links[i] = store.Link{ID: fmt.Sprintf("lnk_%s_%d", o.ObjectID, o.From+i), ObjectID: o.ObjectID, Title: "Link",
				SourceIDs: []string{fmt.Sprintf("src_%s_%d", o.ObjectID, o.From)}, CreatedAt: now}
		}
		decisions := make([]store.Decision, o.Decisions)
		for i := range decisions {
			decisions[i] = store.Decision{ObjectID: o.ObjectID, ThreadID: "thr_preload", NodeID: fmt.Sprintf("node_%d", o.From+i),
				Title: "Decision", Body: "Decided in preload", CreatedAt: now}
		}
		if err := errors.Join(st.LoadSources(ctx, srcs), st.LoadLinks(ctx, links), st.LoadDecisions(ctx, decisions),
			preloadVersions(ctx, st, o)); err != nil {
			return fmt.Errorf("preload %s: %w", o.ObjectID, err)
		}
	}
	return nil
}

// preloadVersions materialises the object unless it is, then adds its versions.
func preloadVersions(ctx context.Context, st *store.Store, o PreloadObject) error {
	if o.Versions == 0 {
		return nil
	}
	if _, err := st.Profile(ctx, o.ObjectID); errors.Is(err, mongox.ErrNotFound) {
		_, err = st.Materialise(ctx, contract.Object{ObjectID: o.ObjectID, InitialLLMTxt: "# Preloaded\n", CreatedAt: clock.Format(clock.Now())})
		if err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	return st.LoadVersions(ctx, o.ObjectID, o.Versions, func(v int) string { return fmt.Sprintf("# Preloaded\n\nVersion %d.\n", v) })
}
