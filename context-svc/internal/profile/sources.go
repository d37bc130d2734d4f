package profile

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/outbound"
)

// Limits of sources.
const (
	MaxSources     = 100
	MaxSourceTitle = 200
	MaxSourceURL   = 2048
	// fetchTimeout bounds one fetch of a URL source while composing, refreshBudget all of them
	// (well within the gateway's upstream timeout); fetchParallel bounds how many run at once.
	fetchTimeout  = 10 * time.Second
	refreshBudget = 15 * time.Second
	fetchParallel = 4
)

// NewSource is a source to create, as the owner sends it.
type NewSource struct {
	Kind     *string `json:"kind" required:"true"`
	Title    *string `json:"title"`
	URL      *string `json:"url"`
	Text     *string `json:"text"`
	Included *bool   `json:"included"`
}

// TextTooLarge is the 413 of a text field over the 256 KiB limit.
func TextTooLarge(field string) *apierr.Error {
	return apierr.Errorf(http.StatusRequestEntityTooLarge, apierr.CodePayloadTooLarge, "%s is larger than %d bytes", field, apierr.MaxTextBytes)
}

// source validates a create request into a source (without ids and times).
func (s *Service) source(req *NewSource) (*store.Source, error) {
	kind := *req.Kind
	if kind == "" {
		return nil, apierr.MissingField("kind")
	}
	if !ValidKind(kind) {
		return nil, apierr.BadRequest(apierr.CodeInvalidKind, "kind must be one of %s", strings.Join(Kinds, ", "))
	}
	title := ""
	if req.Title != nil {
		title = strings.TrimSpace(*req.Title)
	}
	if len(title) > MaxSourceTitle {
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "title is longer than %d characters", MaxSourceTitle)
	}
	src := &store.Source{Kind: kind, Title: title}
	if kind == KindText {
		switch {
		case req.URL != nil:
			return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "a text source takes text, not url")
		case req.Text == nil || strings.TrimSpace(*req.Text) == "":
			return nil, apierr.MissingField("text")
		case len(*req.Text) > apierr.MaxTextBytes:
			return nil, TextTooLarge("text")
		}
		src.Text = *req.Text
		if src.Title == "" {
			src.Title = contract.ProfileTitle(src.Text)
		}
		return src, nil
	}
	switch {
	case req.Text != nil:
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "a %s source takes url, not text", kind)
	case req.URL == nil || *req.URL == "":
		return nil, apierr.MissingField("url")
	case len(*req.URL) > MaxSourceURL:
		return nil, apierr.BadRequest(apierr.CodeInvalidURL, "url is longer than %d characters", MaxSourceURL)
	}
	u, err := s.Fetcher.CheckURL(*req.URL)
	if err != nil {
		return nil, apierr.BadRequest(apierr.CodeInvalidURL, "url must be an absolute http or https URL of a public host")
	}
	src.URL = u.String()
	if src.Title == "" {
		src.Title = contract.Truncate(src.URL, MaxSourceTitle)
	}
	return src, nil
}

// CreateSource adds a source to the object, within the limit of MaxSources, and includes it in
// the public profile (a new version) unless req says otherwise. It reports whether the source
// is included.
func (s *Service) CreateSource(ctx context.Context, t Target, req *NewSource) (*store.Source, bool, error) {
	src, err := s.source(req)
	if err != nil {
		return nil, false, err
	}
	included := req.Included == nil || *req.Included
	src.ID, src.ObjectID, src.CreatedAt = apikey.NewID("src"), t.ObjectID, clock.Now()
	ev := sourceChanged(t, src, included, "created")
	err = s.Store.InsertSource(ctx, src, MaxSources, s.Outbox, ev)
	if errors.Is(err, store.ErrSourceLimit) {
		return nil, false, apierr.Conflict(apierr.CodeConflict, fmt.Sprintf("an object has at most %d sources", MaxSources))
	}
	if err != nil {
		return nil, false, err
	}
	s.Outbox.Confirm(ev)
	if included {
		if _, err := s.write(ctx, t, store.ChangeSources, func(p *store.Profile) error {
			p.Included = append(p.Included, src.ID)
			return nil
		}); err != nil {
			return nil, false, err
		}
	}
	return src, included, nil
}

// Sources pages through the object's sources, oldest first, says which the public profile
// includes, and returns the id to resume after ("": none left).
func (s *Service) Sources(ctx context.Context, q store.SourcePage) ([]store.Source, map[string]bool, string, error) {
	p, err := s.Profile(ctx, q.ObjectID)
	if err != nil {
		return nil, nil, "", err
	}
	list, next, err := s.Store.ListSources(ctx, q)
	if err != nil {
		return nil, nil, "", err
	}
	included := make(map[string]bool, len(p.Included))
	for _, id := range p.Included {
		included[id] = true
	}
	return list, included, next, nil
}

// DeleteSource removes the object's source, which frees its place among MaxSources, and leaves it
// out of the public profile in a new version (change sources) whose context.source_changed says
// deleted. The source is gone before the version is written: a version that failed to be written
// leaves an included id that names nothing, which composing skips.
func (s *Service) DeleteSource(ctx context.Context, t Target, id string) (*store.Profile, error) {
	if !strings.HasPrefix(id, "src_") {
		return nil, apierr.NotFound("source")
	}
	if _, err := s.Profile(ctx, t.ObjectID); err != nil {
		return nil, err
	}
	src, err := s.Store.DeleteSource(ctx, t.ObjectID, id)
	if err != nil {
		return nil, notFound(err, "source")
	}
	return s.write(ctx, t, store.ChangeSources, func(p *store.Profile) error {
		p.Included = slices.DeleteFunc(p.Included, func(included string) bool { return included == id })
		return nil
	}, func(*store.Profile) []events.Pending {
		return []events.Pending{sourceChanged(t, src, false, "deleted")}
	})
}

// Composable returns the sources named by ids, ready to compose: URL sources whose content is
// older than SourceRefresh are fetched again first.
func (s *Service) Composable(ctx context.Context, objectID string, ids []string) ([]Source, error) {
	srcs, err := s.Store.SourcesByID(ctx, objectID, ids)
	if err != nil {
		return nil, err
	}
	s.refresh(ctx, srcs)
	out := make([]Source, len(srcs))
	for i, src := range srcs {
		out[i] = Source{ID: src.ID, Kind: src.Kind, Title: src.Title, URL: src.URL, Text: src.Text}
		if Fetched(src.Kind) && src.Fetch != nil {
			out[i].Text = src.Fetch.Content
			out[i].Unavailable = src.Fetch.Content == "" && src.Fetch.Error != ""
		}
	}
	return out, nil
}

// LLMTxt composes p's llm.txt read for the object at hash: its markdown and its included sources
// (links name hash and baseURL).
func (s *Service) LLMTxt(ctx context.Context, p *store.Profile, hash, baseURL string) (string, error) {
	sources, err := s.Composable(ctx, p.ObjectID, p.Included)
	if err != nil {
		return "", err
	}
	return Compose(hash, baseURL, p.LLMTxt, sources), nil
}

// ComposedProfile is the llm.txt read of the object objectID, composed for hash: what the
// object's public page shows.
func (s *Service) ComposedProfile(ctx context.Context, objectID, hash, baseURL string) (*contract.ComposedProfile, error) {
	p, err := s.Profile(ctx, objectID)
	if err != nil {
		return nil, err
	}
	md, err := s.LLMTxt(ctx, p, hash, baseURL)
	if err != nil {
		return nil, err
	}
	return &contract.ComposedProfile{Markdown: md}, nil
}

// refresh fetches the stale URL sources among srcs, in parallel, and records the results. Those
// not fetched within the budget keep their earlier content and are fetched again next time.
func (s *Service) refresh(ctx context.Context, srcs []store.Source) {
	now := clock.Now()
	ctx, cancel := context.WithTimeout(ctx, refreshBudget)
	defer cancel()
	var wg sync.WaitGroup
	slots := make(chan struct{}, fetchParallel)
	for i := range srcs {
		src := &srcs[i]
		if !Fetched(src.Kind) || (src.Fetch != nil && now.Sub(src.Fetch.FetchedAt) < s.SourceRefresh) {
			continue
		}
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			if ctx.Err() != nil {
				return
			}
			content, fetchErr := s.fetch(ctx, src.URL)
			if fetchErr != "" && ctx.Err() != nil {
				return // out of budget (or the caller left): not the source's failure
			}
			before := ""
			if src.Fetch != nil {
				before = src.Fetch.Content
			}
			fetched := &store.Fetch{SourceID: src.ID, Content: content, FetchedAt: now, Error: fetchErr}
			if fetchErr != "" && src.Fetch != nil {
				fetched.Content = src.Fetch.Content
			}
			src.Fetch = fetched
			// The content is served from memory this time; a failed record only means that the
			// next read fetches again.
			if err := s.Store.RecordFetch(context.WithoutCancel(ctx), src.ID, content, fetchErr, now); err != nil {
				s.Log.Warn("recording a source fetch failed", "source_id", src.ID, "error", err)
			}
			if fetched.Content != before {
				s.ETags.Changed(context.WithoutCancel(ctx), src.ObjectID)
			}
		})
	}
	wg.Wait()
}

// fetch reads a URL source as text; on failure it returns why, in words safe to keep.
func (s *Service) fetch(ctx context.Context, url string) (content, failure string) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	resp, err := s.Fetcher.Get(ctx, url)
	switch {
	case errors.Is(err, outbound.ErrRefused):
		return "", "the address is not allowed"
	case errors.Is(err, outbound.ErrTooLarge):
		return "", "the page is too large"
	case err != nil:
		return "", "the page could not be fetched"
	case resp.Status < 200 || resp.Status > 299:
		return "", fmt.Sprintf("the page answered with status %d", resp.Status)
	}
	text, err := SourceText(resp.ContentType, resp.Body)
	if err != nil {
		return "", "the page is not text"
	}
	return text, ""
}
