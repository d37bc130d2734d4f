package http

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/context-svc/internal/profile"
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
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

type createSourceRequest struct {
	Kind     *string `json:"kind"`
	Title    *string `json:"title"`
	URL      *string `json:"url"`
	Text     *string `json:"text"`
	Included *bool   `json:"included"`
}

type sourceResponse struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Title     string `json:"title"`
	URL       string `json:"url,omitempty"`
	Text      string `json:"text,omitempty"`
	Included  bool   `json:"included"`
	CreatedAt string `json:"created_at"`
}

type sourceListResponse struct {
	Sources    []sourceResponse `json:"sources"`
	NextCursor *string          `json:"next_cursor"`
}

func sourceView(s *store.Source, included bool) sourceResponse {
	return sourceResponse{ID: s.ID, Kind: s.Kind, Title: s.Title, URL: s.URL, Text: s.Text, Included: included,
		CreatedAt: clock.Format(s.CreatedAt)}
}

// newSource validates a create request into a source (without ids and times).
func newSource(req *createSourceRequest, urls *outbound.Client) (*store.Source, error) {
	if req.Kind == nil || *req.Kind == "" {
		return nil, httpx.MissingField("kind")
	}
	kind := *req.Kind
	if !profile.ValidKind(kind) {
		return nil, httpx.BadRequest(httpx.CodeInvalidKind, "kind must be one of %s", strings.Join(profile.Kinds, ", "))
	}
	title := strings.TrimSpace(deref(req.Title))
	if len(title) > MaxSourceTitle {
		return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "title is longer than %d characters", MaxSourceTitle)
	}
	src := &store.Source{Kind: kind, Title: title}
	if kind == profile.KindText {
		switch {
		case req.URL != nil:
			return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "a text source takes text, not url")
		case req.Text == nil || strings.TrimSpace(*req.Text) == "":
			return nil, httpx.MissingField("text")
		case len(*req.Text) > httpx.MaxTextBytes:
			return nil, textTooLarge("text")
		}
		src.Text = *req.Text
		if src.Title == "" {
			src.Title = contract.ProfileTitle(src.Text)
		}
		return src, nil
	}
	switch {
	case req.Text != nil:
		return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "a %s source takes url, not text", kind)
	case req.URL == nil || *req.URL == "":
		return nil, httpx.MissingField("url")
	case len(*req.URL) > MaxSourceURL:
		return nil, httpx.BadRequest(httpx.CodeInvalidURL, "url is longer than %d characters", MaxSourceURL)
	}
	u, err := urls.CheckURL(*req.URL)
	if err != nil {
		return nil, httpx.BadRequest(httpx.CodeInvalidURL, "url must be an absolute http or https URL of a public host")
	}
	src.URL = u.String()
	if src.Title == "" {
		src.Title = contract.Truncate(src.URL, MaxSourceTitle)
	}
	return src, nil
}

func (h *Handler) createSource(c *gin.Context) {
	_, t, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	var req createSourceRequest
	if err := httpx.Decode(c, &req); err != nil {
		httpx.Abort(c, err)
		return
	}
	src, err := newSource(&req, h.Fetcher)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	included := req.Included == nil || *req.Included
	ctx := c.Request.Context()
	n, err := h.Store.CountSources(ctx, t.ObjectID)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	if n >= MaxSources {
		httpx.Abort(c, httpx.Conflict(httpx.CodeConflict, fmt.Sprintf("an object has at most %d sources", MaxSources)))
		return
	}
	src.ID, src.ObjectID, src.CreatedAt = apikey.NewID("src"), t.ObjectID, clock.Now()
	ev := sourceChanged(c, t, src, included, "created")
	src.Events = events.IDs(ev)
	if err := h.Outbox.Stage(ctx, store.Sources, src.ID, ev); err != nil {
		httpx.Abort(c, err)
		return
	}
	if err := h.Store.InsertSource(ctx, src); err != nil {
		httpx.Abort(c, err)
		return
	}
	h.Outbox.Confirm(ev)
	if included {
		_, err := h.write(c, t, store.ChangeSources, func(p *store.Profile) error {
			p.Included = append(p.Included, src.ID)
			return nil
		})
		if err != nil {
			httpx.Abort(c, err)
			return
		}
	}
	c.JSON(http.StatusCreated, sourceView(src, included))
}

// sourceChanged is the context.source_changed event of a source; it never carries a text
// source's text.
func sourceChanged(c *gin.Context, t *authn.Target, s *store.Source, included bool, change string) events.Pending {
	return events.MustNew(events.TopicContext, events.ContextSourceChanged, t.ObjectID, t.Hash, httpx.RequestID(c),
		contract.ContextSourceChangedData{SourceID: s.ID, Kind: s.Kind, Title: s.Title, URL: s.URL, Included: included, Change: change})
}

func (h *Handler) listSources(c *gin.Context) {
	_, t, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	limit, after, err := httpx.PageParams(c, httpx.IDWithPrefix("src"))
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	ctx := c.Request.Context()
	p, err := h.profile(ctx, t.ObjectID)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	list, err := h.Store.ListSources(ctx, store.SourcePage{ObjectID: t.ObjectID, After: after, Limit: limit + 1})
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	resp := sourceListResponse{Sources: []sourceResponse{}}
	list, resp.NextCursor = httpx.Page(list, limit, func(s store.Source) string { return s.ID })
	included := map[string]bool{}
	for _, id := range p.Included {
		included[id] = true
	}
	for i := range list {
		resp.Sources = append(resp.Sources, sourceView(&list[i], included[list[i].ID]))
	}
	c.JSON(http.StatusOK, resp)
}

// composable returns the sources named by ids, ready to compose: URL sources whose content is
// older than SourceRefresh are fetched again first.
func (h *Handler) composable(ctx context.Context, objectID string, ids []string) ([]profile.Source, error) {
	srcs, err := h.Store.SourcesByID(ctx, objectID, ids)
	if err != nil {
		return nil, err
	}
	h.refresh(ctx, srcs)
	out := make([]profile.Source, len(srcs))
	for i, s := range srcs {
		text := s.Text
		if profile.Fetched(s.Kind) {
			text = s.Content
		}
		out[i] = profile.Source{ID: s.ID, Kind: s.Kind, Title: s.Title, URL: s.URL, Text: text,
			Unavailable: profile.Fetched(s.Kind) && s.Content == "" && s.FetchError != ""}
	}
	return out, nil
}

// refresh fetches the stale URL sources among srcs, in parallel, and records the results. Those
// not fetched within the budget keep their earlier content and are fetched again next time.
func (h *Handler) refresh(ctx context.Context, srcs []store.Source) {
	now := clock.Now()
	ctx, cancel := context.WithTimeout(ctx, refreshBudget)
	defer cancel()
	var wg sync.WaitGroup
	slots := make(chan struct{}, fetchParallel)
	for i := range srcs {
		s := &srcs[i]
		if !profile.Fetched(s.Kind) || (s.FetchedAt != nil && now.Sub(*s.FetchedAt) < h.SourceRefresh) {
			continue
		}
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			if ctx.Err() != nil {
				return
			}
			content, fetchErr := h.fetch(ctx, s.URL)
			if fetchErr != "" && ctx.Err() != nil {
				return // out of budget (or the caller left): not the source's failure
			}
			before := s.Content
			s.FetchedAt, s.FetchError = &now, fetchErr
			if fetchErr == "" {
				s.Content = content
			}
			if err := h.Store.RecordFetch(context.WithoutCancel(ctx), s.ID, content, fetchErr, now); err != nil {
				h.Log.Warn("recording a source fetch failed", "source_id", s.ID, "error", err)
			}
			if s.Content != before {
				h.ETags.Changed(context.WithoutCancel(ctx), s.ObjectID)
			}
		})
	}
	wg.Wait()
}

// fetch reads a URL source as text; on failure it returns why, in words safe to keep.
func (h *Handler) fetch(ctx context.Context, url string) (content, failure string) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	resp, err := h.Fetcher.Get(ctx, url)
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
	text, err := profile.SourceText(resp.ContentType, resp.Body)
	if err != nil {
		return "", "the page is not text"
	}
	return text, ""
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
