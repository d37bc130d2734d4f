package app

import (
	"context"
	"fmt"
	"log/slog"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/context-svc/internal/profile"
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// PreloadObject is what Preload stores for one object.
type PreloadObject struct {
	ObjectID                            string
	Sources, Links, Decisions, Versions int
	// From numbers the sources, links and decisions, so that growing an object twice adds new ones.
	From int
}

// Preload grows context-svc's store at db through the same store code as the service: each
// object's text sources as a create stores them (a slot claimed within profile.MaxSources, the
// list entry, the document; without events, which nothing reads in a preloaded store), links as
// a create stores them, and decisions as the decision.recorded consumer records them. It is for
// benchmarks that measure reads at a given size (deploy/e2e's scale benchmark). Versions are
// context writes (store.Write) of the object, materialised first unless it is.
func Preload(ctx context.Context, db *mongo.Database, objects []PreloadObject) error {
	st := store.New(db, slog.New(slog.DiscardHandler))
	outbox := events.NewOutbox(db, nil, slog.New(slog.DiscardHandler), events.OutboxOptions{})
	for _, o := range objects {
		now := clock.Now()
		for i := o.From; i < o.From+o.Sources; i++ {
			id := fmt.Sprintf("src_%s_%d", o.ObjectID, i)
			src := &store.Source{ID: id, ObjectID: o.ObjectID, Kind: profile.KindText, Title: "Source " + id,
				Text: "Preloaded text of " + id, CreatedAt: now}
			if err := st.InsertSource(ctx, src, profile.MaxSources, outbox); err != nil {
				return fmt.Errorf("preload source %s: %w", id, err)
			}
		}
		for i := o.From; i < o.From+o.Links; i++ {
			l := &store.Link{ID: fmt.Sprintf("lnk_%s_%d", o.ObjectID, i), ObjectID: o.ObjectID, Title: "Link",
				SourceIDs: []string{fmt.Sprintf("src_%s_%d", o.ObjectID, o.From)}, CreatedAt: now}
			if err := st.InsertLink(ctx, l); err != nil {
				return fmt.Errorf("preload link %s: %w", l.ID, err)
			}
		}
		for i := o.From; i < o.From+o.Decisions; i++ {
			d := &store.Decision{ObjectID: o.ObjectID, ThreadID: "thr_preload", NodeID: fmt.Sprintf("node_%d", i),
				Title: "Decision", Body: "Decided in preload", CreatedAt: now}
			if err := st.RecordDecision(ctx, d); err != nil {
				return fmt.Errorf("preload decision: %w", err)
			}
		}
		if err := preloadVersions(ctx, st, outbox, o); err != nil {
			return err
		}
	}
	return nil
}

func preloadVersions(ctx context.Context, st *store.Store, outbox *events.Outbox, o PreloadObject) error {
	if o.Versions == 0 {
		return nil
	}
	if _, err := st.Materialise(ctx, contract.Object{ObjectID: o.ObjectID, InitialLLMTxt: "# Preloaded\n", CreatedAt: clock.Format(clock.Now())}); err != nil {
		return fmt.Errorf("preload versions: %w", err)
	}
	for i := range o.Versions {
		text := fmt.Sprintf("# Preloaded\n\nVersion %d.\n", o.From+i)
		if _, _, err := st.Write(ctx, o.ObjectID, store.Edit{Change: store.ChangeLLMTxt, Outbox: outbox, At: clock.Now(),
			Apply: func(p *store.Profile) error { p.LLMTxt = text; return nil }}); err != nil {
			return fmt.Errorf("preload versions: %w", err)
		}
	}
	return nil
}
