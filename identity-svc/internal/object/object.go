// Package object holds identity-svc's use cases: creating objects with their owner key, keys and
// rotation, associations, custom hashes, the directory and the profile facts other services
// report. It owns the write order and the events each write produces (events.go).
package object

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/identity-svc/internal/payment"
	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpsig"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/mongox"
)

// Mailbox statuses of the spec.
const (
	StatusUnclaimed = store.StatusUnclaimed
	StatusClaimed   = store.StatusClaimed
)

// Outbox stages the events of a write before it and relays them once it succeeded.
type Outbox interface {
	events.Stager
	Confirm(evs ...events.Pending)
}

// Validators are the validators of public object reads (httpx.ETags): a write that changes what
// a read shows replaces the object's one after its store write and before it answers.
type Validators interface {
	Changed(ctx context.Context, objectID string)
}

// Service runs the use cases.
type Service struct {
	Store    Store
	Outbox   Outbox
	Redis    *redis.Client
	Payments payment.Verifier
	Log      *slog.Logger
	// ETags validates public object reads; writes that change what they show replace it.
	ETags Validators
	// Sealer seals the private halves of the signing keys svc holds.
	Sealer *Sealer
	// BaseURL is the public URL svc answers at, without a final "/": objects' DIDs are made of it.
	BaseURL string
	// RequestSigner signs svc's own outbound requests; its key is published by
	// ServiceKeyDirectory.
	RequestSigner *httpsig.Signer
}

// NewObject is what a creation asks for.
type NewObject struct {
	InitialLLMTxt string
	Rules         json.RawMessage
	Visibility    *contract.Visibility // nil is public
}

// Created is a new object with its owner key, shown once.
type Created struct {
	Object *store.Object
	APIKey string
}

// Create stores a new object with its hash and owner key. The object is stored before its owner
// key, and object.created travels in the key's document: a key document is never updated by
// anyone but the relay, and an object whose key could not be stored is removed again without an
// event ever naming it.
func (s *Service) Create(ctx context.Context, requestID string, in NewObject) (*Created, error) {
	visibility := contract.Public
	if in.Visibility != nil {
		visibility = *in.Visibility
	}
	if !visibility.Valid() {
		return nil, apierr.BadRequest(apierr.CodeInvalidVisibility, "visibility must be public or private")
	}
	if len(in.InitialLLMTxt) > apierr.MaxTextBytes {
		return nil, apierr.Errorf(http.StatusRequestEntityTooLarge, apierr.CodePayloadTooLarge,
			"initial_llm_txt is larger than %d bytes", apierr.MaxTextBytes)
	}
	rules, err := contract.DecodeRules(in.Rules)
	if err != nil {
		return nil, err
	}
	now := clock.Now()
	objectID := apikey.NewID("obj")
	hash, err := s.reserveNewHash(ctx, objectID)
	if err != nil {
		return nil, err
	}
	key, ownerKey := newOwnerKey(objectID, now)
	obj := &store.Object{
		ID: objectID, Hash: hash, Hashes: []string{hash}, Visibility: visibility, MailboxStatus: StatusUnclaimed,
		Version: 1, Title: contract.ProfileTitle(in.InitialLLMTxt), InitialLLMTxt: in.InitialLLMTxt, Rules: rules,
		CreatedAt: now, UpdatedAt: now,
	}
	ev, err := objectCreated(obj, requestID)
	if err == nil {
		err = s.Outbox.Stage(ctx, store.Keys, ownerKey.Digest, ev)
	}
	if err != nil {
		return nil, s.undo(ctx, err, func() error { return s.Store.ReleaseHash(ctx, hash, objectID) })
	}
	if err := s.Store.InsertObject(ctx, obj); err != nil {
		return nil, s.undo(ctx, err, func() error { return s.Store.ReleaseHash(ctx, hash, objectID) })
	}
	ownerKey.Events = events.IDs(ev)
	if err := s.Store.InsertKey(ctx, ownerKey); err != nil {
		return nil, s.undo(ctx, err,
			func() error { return s.Store.DeleteObject(ctx, objectID) },
			func() error { return s.Store.ReleaseHash(ctx, hash, objectID) })
	}
	s.Outbox.Confirm(ev)
	s.remember(ctx, hash, ownerKey)
	s.firstKey(ctx, obj)
	return &Created{Object: obj, APIKey: key}, nil
}

// undo runs the undo steps of a write that failed with cause and returns cause joined with every
// undo step's error: a failed undo leaves something behind that an operator must know about.
func (s *Service) undo(ctx context.Context, cause error, steps ...func() error) error {
	errs := []error{cause}
	for _, step := range steps {
		if err := step(); err != nil {
			s.Log.ErrorContext(ctx, "undo step failed", "cause", cause, "error", err)
			errs = append(errs, fmt.Errorf("undo: %w", err))
		}
	}
	return errors.Join(errs...)
}

// newOwnerKey makes an owner key of objectID: the key to show once and its stored form.
func newOwnerKey(objectID string, now time.Time) (string, *store.Key) {
	key, digest := apikey.Generate(apikey.OwnerPrefix)
	return key, &store.Key{
		Digest: digest, KeyID: apikey.NewID("key"), ObjectID: objectID, Owner: true, Label: "owner",
		Scopes: []string{contract.ScopeRead, contract.ScopeWrite, contract.ScopeMailbox}, Prefix: apikey.DisplayPrefix(key), CreatedAt: now,
	}
}

// reserveNewHash draws generated hashes until one is free (a clash of 100 random bits is
// practically impossible, but a custom hash could take a generated-looking name).
func (s *Service) reserveNewHash(ctx context.Context, objectID string) (string, error) {
	for range 5 {
		hash := apikey.NewHash()
		err := s.Store.ClaimHash(ctx, hash, objectID)
		if err == nil {
			return hash, nil
		}
		if !errors.Is(err, store.ErrTaken) {
			return "", err
		}
	}
	return "", apierr.Conflict(apierr.CodeConflict, "could not allocate a hash, retry")
}

// ByHash returns the object a current or previous hash names.
func (s *Service) ByHash(ctx context.Context, hash string) (*store.Object, error) {
	obj, err := s.Store.ObjectByHash(ctx, hash)
	return obj, notFound(err, "object")
}

// Read returns the object a hash names as viewer (contract.Principal.Viewer: an object id, or ""
// for an anonymous caller) may see it: one it may not learn of (contract.Visible) is not found.
func (s *Service) Read(ctx context.Context, hash, viewer string) (*store.Object, error) {
	obj, err := s.ByHash(ctx, hash)
	if err != nil {
		return nil, err
	}
	if !contract.Visible(obj.Visibility, obj.ID, viewer) {
		return nil, apierr.NotFound("object")
	}
	return obj, nil
}

// ByID returns an object by id.
func (s *Service) ByID(ctx context.Context, id string) (*store.Object, error) {
	obj, err := s.Store.Object(ctx, id)
	return obj, notFound(err, "object")
}

// notFound maps the store's not-found to the public answer naming what was missing.
func notFound(err error, what string) error {
	if errors.Is(err, mongox.ErrNotFound) {
		return apierr.NotFound(what)
	}
	return err
}

// forgetHashes drops cached resolutions of every hash of an object, so that no gateway or
// service keeps routing with a stale current hash or mailbox status.
func (s *Service) forgetHashes(ctx context.Context, hashes ...string) error {
	keys := make([]string, len(hashes))
	for i, hash := range hashes {
		keys[i] = identity.HashCacheKey(hash)
	}
	if err := s.Redis.Del(ctx, keys...).Err(); err != nil {
		return fmt.Errorf("forget cached hashes: %w", err)
	}
	return nil
}

// InternalView is an object as the other services read it.
func InternalView(o *store.Object) contract.Object {
	return contract.Object{
		ObjectID: o.ID, Hash: o.Hash, Visibility: o.Visibility, MailboxStatus: o.MailboxStatus,
		Version: o.Version, Title: o.Title, InitialLLMTxt: o.InitialLLMTxt, Rules: o.Rules,
		CreatedAt: clock.Format(o.CreatedAt), UpdatedAt: clock.Format(o.UpdatedAt),
	}
}

// ignoreNotFound treats a missing document as done.
func ignoreNotFound(err error) error {
	if errors.Is(err, mongox.ErrNotFound) {
		return nil
	}
	return err
}
