// Package webhook holds webhook-svc's use cases: owner webhooks and context subscriptions, the
// public payload of each event, and the sender that signs, posts and retries deliveries.
package webhook

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// Limits of a subscription.
const (
	MaxURLLength      = 2048
	MaxHeaders        = 20
	MaxHeaderValueLen = 4096
	// RecentDeliveries is how many deliveries a subscription read shows.
	RecentDeliveries = 20
)

// SubscriptionStore is what the subscription use cases (and their delivery log) read and write.
type SubscriptionStore interface {
	InsertSubscription(ctx context.Context, sub *store.Subscription) error
	Subscription(ctx context.Context, id string) (*store.Subscription, error)
	ReplaceSubscription(ctx context.Context, sub *store.Subscription) error
	DeleteSubscription(ctx context.Context, sub *store.Subscription) error
	ListSubscription(ctx context.Context, sub *store.Subscription) error
	ListedSubscriptions(ctx context.Context, objectID, kind, after string, limit int) ([]store.Subscription, error)
	SubscriptionsByID(ctx context.Context, ids []string) (map[string]*store.Subscription, error)
	SubscriptionsOf(ctx context.Context, objectID string, limit int) ([]store.Subscription, error)
	Healths(ctx context.Context, ids []string) (map[string]*store.SubscriptionHealth, error)
	SlotsOf(ctx context.Context, scope string, limit int) ([]store.Slot, error)
	EachSubscription(ctx context.Context, fn func(*store.Subscription) error) error
	MigrationDone(ctx context.Context, name string) (bool, error)
	MarkMigration(ctx context.Context, name string, at time.Time) error
	Health(ctx context.Context, id string) (*store.SubscriptionHealth, error)
	PutHealth(ctx context.Context, h *store.SubscriptionHealth) error
	DeleteHealth(ctx context.Context, id string) error
	InsertScheduled(ctx context.Context, ds []*store.Delivery) ([]bool, error)
	Delivery(ctx context.Context, id string) (*store.Delivery, error)
	DeliveriesByID(ctx context.Context, ids []string) (map[string]*store.Delivery, error)
	TakeSlot(ctx context.Context, scope string, limit, start int, subID string, at time.Time) (string, error)
	ReleaseSlots(ctx context.Context, ids ...string) error
	PutVisibility(ctx context.Context, objectID, visibility string) error
	Attempts(ctx context.Context, q store.AttemptRange, limit int, asc bool) ([]store.LoggedAttempt, error)
	CountAttempts(ctx context.Context, q store.AttemptRange) (int64, error)
}

// URLChecker refuses callback URLs the sender would never dial (pkg/outbound).
type URLChecker interface {
	CheckURL(raw string) (*url.URL, error)
}

// Subscriptions are the subscription use cases.
type Subscriptions struct {
	Store SubscriptionStore
	URLs  URLChecker
	// Overlap is how long a rotated-away secret keeps signing beside the new one.
	Overlap time.Duration
	Quotas  Quotas
}

// Draft is a new subscription as asked for.
type Draft struct {
	CallbackURL string
	Events      []string
}

// Created is a new subscription with its secret, shown once.
type Created struct {
	*store.Subscription
	Secret string
}

// CreateWebhook creates an owner webhook on the owner's own object.
func (s *Subscriptions) CreateWebhook(ctx context.Context, t *contract.Target, d Draft) (*Created, error) {
	return s.create(ctx, store.KindWebhook, t.ObjectID, t.ObjectID, t.Hash, d, Events)
}

// CreateContextSubscription subscribes the caller's object to a watched box's context updates.
// The API refuses a box p may not learn of before it gets here (contract.Visible).
func (s *Subscriptions) CreateContextSubscription(ctx context.Context, p *contract.Principal, t *contract.Target, d Draft) (*Created, error) {
	if t.Visibility != "" {
		// The fan-out decides from this projection whether the box's events may reach strangers.
		if err := s.Store.PutVisibility(ctx, t.ObjectID, string(t.Visibility)); err != nil {
			return nil, err
		}
	}
	return s.create(ctx, store.KindContext, t.ObjectID, p.ObjectID, p.Hash, d, ContextEvents)
}

func (s *Subscriptions) create(ctx context.Context, kind, objectID, creatorID, creatorHash string, d Draft, allowed []string) (*Created, error) {
	callback, err := s.checkURL(d.CallbackURL)
	if err != nil {
		return nil, err
	}
	evs, err := checkEvents(d.Events, allowed)
	if err != nil {
		return nil, err
	}
	sub, secret := newSubscription(kind, objectID, creatorID, creatorHash, callback, evs)
	if sub.Slots, err = s.takeSlots(ctx, sub); err != nil {
		return nil, err
	}
	if err := s.Store.InsertSubscription(ctx, sub); err != nil {
		s.releaseSlots(ctx, sub.Slots)
		return nil, err
	}
	return &Created{Subscription: sub, Secret: secret}, nil
}

// newSubscription is a new subscription as a create stores it, and its secret.
func newSubscription(kind, objectID, creatorID, creatorHash, callback string, evs []string) (*store.Subscription, string) {
	now := clock.Now()
	prefix := "whk"
	if kind == store.KindContext {
		prefix = "csub"
	}
	secret := NewSecret()
	return &store.Subscription{
		ID: apikey.NewID(prefix), Kind: kind, ObjectID: objectID, CreatorID: creatorID, HolderHash: creatorHash, CallbackURL: callback,
		Events: evs, Secrets: []store.Secret{{Value: secret, CreatedAt: now}}, CreatedAt: now, UpdatedAt: now,
	}, secret
}

// ListWebhooks lists up to limit of an owner's webhooks, oldest first (ids sort in creation
// order), after the webhook id after: one find of the object's list of webhooks and one of the
// webhooks on it.
func (s *Subscriptions) ListWebhooks(ctx context.Context, t *contract.Target, after string, limit int) ([]store.Subscription, error) {
	return s.Store.ListedSubscriptions(ctx, t.ObjectID, store.KindWebhook, after, limit)
}

// Status is a webhook with its health and latest deliveries.
type Status struct {
	*store.Subscription
	Health     *store.SubscriptionHealth
	Deliveries []store.Delivery
}

// Webhook returns an owner's webhook with its health and recent deliveries.
func (s *Subscriptions) Webhook(ctx context.Context, t *contract.Target, id string) (*Status, error) {
	sub, err := s.webhook(ctx, t, id)
	if err != nil {
		return nil, err
	}
	h, err := s.Store.Health(ctx, id)
	if err != nil {
		return nil, err
	}
	ds, err := s.recentDeliveries(ctx, id)
	if err != nil {
		return nil, err
	}
	return &Status{Subscription: sub, Health: h, Deliveries: ds}, nil
}

// Change is a webhook update; nil fields stay as they are.
type Change struct {
	CallbackURL *string
	Events      []string
	// Headers, when not nil, replace the stored headers (an empty object removes them all).
	Headers map[string]string
	// Enabled, when not nil, enables a disabled webhook with a clean health record (true) or
	// disables it (false). Events that happen while it is disabled are not delivered.
	Enabled *bool
}

// DisabledByOwner is the reason shown for a webhook its owner disabled.
const DisabledByOwner = "disabled by its owner"

// UpdateWebhook applies a change to an owner's webhook.
func (s *Subscriptions) UpdateWebhook(ctx context.Context, t *contract.Target, id string, ch Change) (*store.Subscription, error) {
	sub, err := s.webhook(ctx, t, id)
	if err != nil {
		return nil, err
	}
	if ch.CallbackURL != nil {
		if sub.CallbackURL, err = s.checkURL(*ch.CallbackURL); err != nil {
			return nil, err
		}
	}
	if ch.Events != nil {
		if sub.Events, err = checkEvents(ch.Events, Events); err != nil {
			return nil, err
		}
	}
	if ch.Headers != nil {
		if err := checkHeaders(ch.Headers); err != nil {
			return nil, err
		}
		sub.Headers = ch.Headers
	}
	sub.UpdatedAt = clock.Now()
	if ch.Enabled != nil && !*ch.Enabled && sub.DisabledAt == nil {
		sub.DisabledAt = &sub.UpdatedAt
	}
	if ch.Enabled != nil && *ch.Enabled {
		sub.DisabledAt = nil
	}
	if err := s.Store.ReplaceSubscription(ctx, sub); err != nil {
		return nil, err
	}
	if ch.Enabled != nil && *ch.Enabled {
		if err := s.enable(ctx, sub); err != nil {
			return nil, err
		}
	}
	return sub, nil
}

// enable forgets the failures that made the sender disable a webhook, so that the endpoint gets
// the full failure period again. (The owner's own disable is on the subscription.)
func (s *Subscriptions) enable(ctx context.Context, sub *store.Subscription) error {
	h, err := s.Store.Health(ctx, sub.ID)
	if err != nil || h.DisabledAt == nil {
		return err
	}
	h.DisabledAt, h.DisabledReason, h.FailingSince = nil, "", nil
	h.ObjectID = sub.ObjectID
	return s.Store.PutHealth(ctx, h)
}

// RotateSecret gives a webhook a new secret; the previous ones keep signing for the overlap, so
// receivers can switch without missing a delivery.
func (s *Subscriptions) RotateSecret(ctx context.Context, t *contract.Target, id string) (*Created, error) {
	sub, err := s.webhook(ctx, t, id)
	if err != nil {
		return nil, err
	}
	now := clock.Now()
	until := now.Add(s.Overlap)
	kept := []store.Secret{}
	for _, sec := range sub.Secrets {
		if sec.ExpiresAt != nil && !now.Before(*sec.ExpiresAt) {
			continue
		}
		if sec.ExpiresAt == nil {
			sec.ExpiresAt = &until
		}
		kept = append(kept, sec)
	}
	secret := NewSecret()
	sub.Secrets = append(kept, store.Secret{Value: secret, CreatedAt: now})
	sub.UpdatedAt = now
	if err := s.Store.ReplaceSubscription(ctx, sub); err != nil {
		return nil, err
	}
	return &Created{Subscription: sub, Secret: secret}, nil
}

// DeleteWebhook deletes an owner's webhook.
func (s *Subscriptions) DeleteWebhook(ctx context.Context, t *contract.Target, id string) error {
	sub, err := s.webhook(ctx, t, id)
	if err != nil {
		return err
	}
	return s.delete(ctx, sub)
}

// DeleteContextSubscription deletes a context subscription of the watched box; the object that
// created it and the box's owner may (anyone else gets 404).
func (s *Subscriptions) DeleteContextSubscription(ctx context.Context, p *contract.Principal, t *contract.Target, id string) error {
	sub, err := s.Store.Subscription(ctx, id)
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		return apierr.NotFound("subscription")
	case err != nil:
		return err
	}
	owner := t.ObjectID == p.ObjectID
	if sub.Kind != store.KindContext || sub.ObjectID != t.ObjectID || (sub.CreatorID != p.ObjectID && !owner) {
		return apierr.NotFound("subscription")
	}
	return s.delete(ctx, sub)
}

// delete deletes a subscription, then frees its quota places: a stop between leaves a place
// taken, which the next create that finds the scope full frees (see freeStrays).
func (s *Subscriptions) delete(ctx context.Context, sub *store.Subscription) error {
	if err := s.Store.DeleteSubscription(ctx, sub); err != nil {
		return err
	}
	if err := s.Store.DeleteHealth(ctx, sub.ID); err != nil {
		return err
	}
	return s.Store.ReleaseSlots(ctx, sub.Slots...)
}

// Replay sends one delivery of a webhook again, as a new delivery signed with the current
// secrets; the sender picks it up at once.
func (s *Subscriptions) Replay(ctx context.Context, t *contract.Target, id, deliveryID string) (*store.Delivery, error) {
	if _, err := s.webhook(ctx, t, id); err != nil {
		return nil, err
	}
	d, err := s.Store.Delivery(ctx, deliveryID)
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		return nil, apierr.NotFound("delivery")
	case err != nil:
		return nil, err
	}
	if d.SubscriptionID != id {
		return nil, apierr.NotFound("delivery")
	}
	now := clock.Now()
	replay := &store.Delivery{
		ID: apikey.NewID("dlv"), SubscriptionID: id, EventID: d.EventID, Event: d.Event, Body: d.Body,
		CreatedAt: now, Status: store.StatusPending, NextAttemptAt: &now, Attempts: []store.Attempt{}, ReplayOf: d.ID,
	}
	if _, err := s.Store.InsertScheduled(ctx, []*store.Delivery{replay}); err != nil {
		return nil, err
	}
	return replay, nil
}

// webhook reads an owner webhook of the target; any other subscription is 404.
func (s *Subscriptions) webhook(ctx context.Context, t *contract.Target, id string) (*store.Subscription, error) {
	sub, err := s.Store.Subscription(ctx, id)
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		return nil, apierr.NotFound("webhook")
	case err != nil:
		return nil, err
	}
	if sub.Kind != store.KindWebhook || sub.ObjectID != t.ObjectID {
		return nil, apierr.NotFound("webhook")
	}
	return sub, nil
}

func (s *Subscriptions) checkURL(raw string) (string, error) {
	if len(raw) > MaxURLLength {
		return "", apierr.BadRequest(apierr.CodeInvalidURL, "callback_url is longer than %d characters", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" {
		return "", apierr.BadRequest(apierr.CodeInvalidURL, "callback_url must be an absolute https URL")
	}
	if _, err := s.URLs.CheckURL(raw); err != nil {
		return "", apierr.BadRequest(apierr.CodeInvalidURL, "callback_url is not allowed: %v", err)
	}
	return raw, nil
}

// checkEvents validates a list of public event names; nil means every allowed event.
func checkEvents(evs, allowed []string) ([]string, error) {
	if evs == nil {
		return slices.Clone(allowed), nil
	}
	if len(evs) == 0 {
		return nil, apierr.BadRequest(apierr.CodeInvalidKind, "events must name at least one of: %s", strings.Join(allowed, ", "))
	}
	out := []string{}
	for _, e := range evs {
		if !slices.Contains(allowed, e) {
			return nil, apierr.BadRequest(apierr.CodeInvalidKind, "event %q is not one of: %s", e, strings.Join(allowed, ", "))
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$")

// reservedHeaders may not be stored: those the sender sets, the hop-by-hop ones (RFC 9110
// §7.6.1), which describe one connection rather than the request, and those proxies use to
// describe a request's path or credentials, which a receiver may trust.
var reservedHeaders = []string{
	"content-type", "content-length", "content-encoding", "transfer-encoding", "connection", "host", "te",
	"upgrade", "trailer", "user-agent", "x-svc-event", "webhook-id", "webhook-timestamp", "webhook-signature",
	"keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "expect", "via",
	"forwarded", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-real-ip", "max-forwards",
}

// validHeaderValue reports whether v is an RFC 9110 field value: visible characters, spaces and
// tabs (and obs-text), no other control character, no leading or trailing whitespace.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return strings.TrimSpace(v) == v
}

// checkHeaders validates stored headers. Errors name the header, never its value.
func checkHeaders(h map[string]string) error {
	if len(h) > MaxHeaders {
		return apierr.BadRequest(apierr.CodeInvalidRequest, "at most %d headers may be stored", MaxHeaders)
	}
	for name, value := range h {
		if !headerName.MatchString(name) {
			return apierr.BadRequest(apierr.CodeInvalidRequest, "header name %q is not a valid HTTP header name", name)
		}
		if slices.Contains(reservedHeaders, strings.ToLower(name)) {
			return apierr.BadRequest(apierr.CodeInvalidRequest, "header %q is set by the sender and cannot be stored", name)
		}
		if len(value) > MaxHeaderValueLen || !validHeaderValue(value) {
			return apierr.BadRequest(apierr.CodeInvalidRequest, "the value of header %q must be at most %d bytes of visible characters, spaces and tabs, not starting or ending with a space", name, MaxHeaderValueLen)
		}
	}
	return nil
}

// idsOf is the id (or key) that id reads of each of xs, in order.
func idsOf[T any](xs []T, id func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = id(x)
	}
	return out
}
