package profile

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// ProfileSection is the id of the section that stands for the owner's markdown.
const ProfileSection = "profile"

// setLLMTxt replaces the owner's markdown, and the title derived from it. A body that is a read
// llm.txt written back keeps only its stored part.
func setLLMTxt(p *store.Profile, md string) {
	md = StoredPart(md)
	p.LLMTxt = md
	p.Title = contract.ProfileTitle(md)
}

// PutLLMTxt replaces the owner's markdown.
func (s *Service) PutLLMTxt(ctx context.Context, t Target, md string) (*store.Profile, error) {
	return s.write(ctx, t, store.ChangeLLMTxt, func(p *store.Profile) error {
		setLLMTxt(p, md)
		return nil
	})
}

// PutRules replaces the rules (nil clears them).
func (s *Service) PutRules(ctx context.Context, t Target, rules *contract.Rules) (*store.Profile, error) {
	return s.write(ctx, t, store.ChangeRules, func(p *store.Profile) error {
		p.Rules = rules
		return nil
	})
}

// SectionChange includes or leaves out one section of the public profile; both fields are
// required.
type SectionChange struct {
	ID       *string `json:"id"`
	Included *bool   `json:"included"`
}

// ContextChange is a write of the whole structured context: the markdown, the rules when
// SetRules, and which sources the public profile includes.
type ContextChange struct {
	LLMTxt   string
	SetRules bool
	Rules    *contract.Rules
	Sections []SectionChange
}

// PutContext writes the structured context; sources whose inclusion changed get a
// context.source_changed event with the version.
func (s *Service) PutContext(ctx context.Context, t Target, ch ContextChange) (*store.Profile, error) {
	named, wanted, err := sectionChanges(ch.Sections)
	if err != nil {
		return nil, err
	}
	known, err := s.Store.SourcesByID(ctx, t.ObjectID, named)
	if err != nil {
		return nil, err
	}
	if len(known) != len(wanted) {
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "sections name a source this object does not have")
	}
	knownIDs := make([]string, len(known))
	for i, src := range known {
		knownIDs[i] = src.ID
	}
	var toggled []string
	return s.write(ctx, t, store.ChangeContext, func(p *store.Profile) error {
		setLLMTxt(p, ch.LLMTxt)
		if ch.SetRules {
			p.Rules = ch.Rules
		}
		p.Included, toggled = Include(p.Included, knownIDs, wanted)
		return nil
	}, func(*store.Profile) []events.Pending {
		var evs []events.Pending
		for i := range known {
			if slices.Contains(toggled, known[i].ID) {
				evs = append(evs, sourceChanged(t, &known[i], wanted[known[i].ID], "updated"))
			}
		}
		return evs
	})
}

// sectionChanges validates the sections of a context write into the source ids they name, in
// order, and source id → included. The profile section is always included and cannot be left
// out.
func sectionChanges(in []SectionChange) ([]string, map[string]bool, error) {
	if len(in) > MaxSources+1 {
		return nil, nil, apierr.BadRequest(apierr.CodeInvalidRequest, "sections has more than %d entries", MaxSources+1)
	}
	var named []string
	wanted := map[string]bool{}
	for i, sc := range in {
		switch {
		case sc.ID == nil || *sc.ID == "":
			return nil, nil, apierr.MissingField("sections[" + strconv.Itoa(i) + "].id")
		case sc.Included == nil:
			return nil, nil, apierr.MissingField("sections[" + strconv.Itoa(i) + "].included")
		case *sc.ID == ProfileSection:
			if !*sc.Included {
				return nil, nil, apierr.BadRequest(apierr.CodeInvalidRequest, "the profile section is always included")
			}
			continue
		case !strings.HasPrefix(*sc.ID, "src_"):
			return nil, nil, apierr.BadRequest(apierr.CodeInvalidRequest, "sections[%d].id is not a section id", i)
		}
		if _, dup := wanted[*sc.ID]; dup {
			return nil, nil, apierr.BadRequest(apierr.CodeInvalidRequest, "section %s is listed twice", *sc.ID)
		}
		named = append(named, *sc.ID)
		wanted[*sc.ID] = *sc.Included
	}
	return named, wanted, nil
}

// ContextView is the structured context of the owner's read: the current profile and the
// object's sources, in order.
type ContextView struct {
	Profile *store.Profile
	Sources []store.Source
}

// Context reads the structured context.
func (s *Service) Context(ctx context.Context, objectID string) (*ContextView, error) {
	p, err := s.Profile(ctx, objectID)
	if err != nil {
		return nil, err
	}
	sources, err := s.allSources(ctx, objectID)
	if err != nil {
		return nil, err
	}
	return &ContextView{Profile: p, Sources: sources}, nil
}

// contextPages bounds the pages of sources the structured context reads: an object holds at most
// MaxSources, and a page reads up to four list entries per source, so only a list mostly made of
// deleted sources needs more than one.
const contextPages = 8

// allSources reads the object's sources, oldest first, in at most contextPages pages.
func (s *Service) allSources(ctx context.Context, objectID string) ([]store.Source, error) {
	var all []store.Source
	var after string
	for range contextPages {
		page, next, err := s.Store.ListSources(ctx, store.SourcePage{ObjectID: objectID, After: after, Limit: MaxSources - len(all)})
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if after = next; after == "" || len(all) >= MaxSources {
			break
		}
	}
	return all, nil
}

// Version returns one version of an object.
func (s *Service) Version(ctx context.Context, objectID string, version int) (*store.Profile, error) {
	v, err := s.Store.VersionOf(ctx, objectID, version)
	return v, notFound(err, "version")
}

// Versions pages through an object's versions, newest first, from q.Top (0: the current
// version).
func (s *Service) Versions(ctx context.Context, q store.VersionQuery) ([]store.Profile, error) {
	if q.Top == 0 {
		p, err := s.Profile(ctx, q.ObjectID)
		if err != nil {
			return nil, err
		}
		q.Top = p.Version
	}
	return s.Store.ListVersions(ctx, q)
}
