package profile

import (
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// The events context-svc publishes, all on the context topic. Use cases build them here and store
// them with the document their write inserts.

// contextUpdated is the context.updated event of a new version. It carries what the version's
// rules say of admission, every time, so that mailbox-svc's projection of it follows the rules
// without asking context-svc.
func contextUpdated(t Target, p *store.Profile) events.Pending {
	admission := p.Rules.Admission()
	return events.MustNew(events.TopicContext, events.ContextUpdated, t.ObjectID, t.Hash, t.RequestID,
		contract.ContextUpdatedData{Version: p.Version, UpdatedAt: clock.Format(p.UpdatedAt), Title: p.Title, Change: p.Change,
			Admission: &admission})
}

// sourceChanged is the context.source_changed event of a source; it never carries a text
// source's text.
func sourceChanged(t Target, s *store.Source, included bool, change string) events.Pending {
	return events.MustNew(events.TopicContext, events.ContextSourceChanged, t.ObjectID, t.Hash, t.RequestID,
		contract.ContextSourceChangedData{SourceID: s.ID, Kind: s.Kind, Title: s.Title, URL: s.URL, Included: included, Change: change})
}
