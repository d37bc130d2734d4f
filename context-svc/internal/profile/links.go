package profile

import (
	"context"
	"strings"

	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
)

// Limits of context links.
const (
	MaxLinkTitle   = 200
	MaxLinkNote    = 2000
	MaxLinkSources = 50
)

// NewLink is a context link to create, as the owner sends it.
type NewLink struct {
	Title     *string  `json:"title"`
	Note      *string  `json:"note"`
	SourceIDs []string `json:"source_ids"`
}

// validate checks a create request and returns its title and note.
func (req *NewLink) validate() (title, note string, err error) {
	if req.Title != nil {
		title = strings.TrimSpace(*req.Title)
	}
	if req.Note != nil {
		note = *req.Note
	}
	switch {
	case title == "":
		return "", "", apierr.MissingField("title")
	case len(title) > MaxLinkTitle:
		return "", "", apierr.BadRequest(apierr.CodeInvalidRequest, "title is longer than %d characters", MaxLinkTitle)
	case len(note) > MaxLinkNote:
		return "", "", apierr.BadRequest(apierr.CodeInvalidRequest, "note is longer than %d characters", MaxLinkNote)
	case len(req.SourceIDs) == 0:
		return "", "", apierr.MissingField("source_ids")
	case len(req.SourceIDs) > MaxLinkSources:
		return "", "", apierr.BadRequest(apierr.CodeInvalidRequest, "source_ids has more than %d entries", MaxLinkSources)
	}
	seen := map[string]bool{}
	for _, id := range req.SourceIDs {
		if seen[id] {
			return "", "", apierr.BadRequest(apierr.CodeInvalidRequest, "source %s is listed twice", id)
		}
		seen[id] = true
	}
	return title, note, nil
}

// CreateLink shares some of the object's sources at a public address.
func (s *Service) CreateLink(ctx context.Context, t Target, req *NewLink) (*store.Link, error) {
	title, note, err := req.validate()
	if err != nil {
		return nil, err
	}
	known, err := s.Store.SourcesByID(ctx, t.ObjectID, req.SourceIDs)
	if err != nil {
		return nil, err
	}
	if len(known) != len(req.SourceIDs) {
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "source_ids name a source this object does not have")
	}
	l := &store.Link{ID: apikey.NewID("lnk"), ObjectID: t.ObjectID, Title: title, Note: note, SourceIDs: req.SourceIDs, CreatedAt: clock.Now()}
	if err := s.Store.InsertLink(ctx, l); err != nil {
		return nil, err
	}
	return l, nil
}

// Links pages through the object's links, newest first, and returns the id to page on from
// ("": none).
func (s *Service) Links(ctx context.Context, q store.LinkPage) ([]store.Link, string, error) {
	return s.Store.ListLinks(ctx, q)
}

// PublicLink loads a link and composes its sources. A link is an explicit share by the owner:
// it composes the sources it names whether or not they are in the public profile.
func (s *Service) PublicLink(ctx context.Context, id string) (*store.Link, string, error) {
	if !strings.HasPrefix(id, "lnk_") {
		return nil, "", apierr.NotFound("context link")
	}
	l, err := s.Store.Link(ctx, id)
	if err != nil {
		return nil, "", notFound(err, "context link")
	}
	sources, err := s.Composable(ctx, l.ObjectID, l.SourceIDs)
	if err != nil {
		return nil, "", err
	}
	return l, ComposeSources(sources), nil
}
