package object

import (
	"context"
	"time"

	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/events"
)

// Store is what the use cases need of the repository; *store.Store satisfies it.
type Store interface {
	ObjectStore
	KeyStore
	AssociationStore
	VoucherStore
}

// ObjectStore holds objects, their hashes and their facts.
type ObjectStore interface {
	InsertObject(ctx context.Context, o *store.Object) error
	DeleteObject(ctx context.Context, id string) error
	Object(ctx context.Context, id string) (*store.Object, error)
	ObjectByHash(ctx context.Context, hash string) (*store.Object, error)
	Directory(ctx context.Context, q store.DirectoryQuery) ([]store.Object, string, error)
	ClaimHash(ctx context.Context, hash, objectID string) error
	ReleaseHash(ctx context.Context, hash, objectID string) error
	ChangeHash(ctx context.Context, o *store.Object, hash, username string, at time.Time, outbox events.Stager, ev events.Pending) error
	UpdateProfile(ctx context.Context, id string, version int, title string, at time.Time) error
	RecordClaim(ctx context.Context, id string, h store.SocialHandle, at time.Time) error
	RecordLapse(ctx context.Context, id, claimID string, at time.Time) error
	AddSigningKey(ctx context.Context, objectID string, n int, key store.SigningKey, at time.Time) error
	// ObjectUncached reads an object past the replica's cache (right after a write of its own).
	ObjectUncached(ctx context.Context, id string) (*store.Object, error)
}

// KeyStore holds keys by digest, their revocations and their use.
type KeyStore interface {
	InsertKey(ctx context.Context, k *store.Key) error
	DeleteKey(ctx context.Context, digest string) error
	KeyByDigest(ctx context.Context, digest string) (*store.Key, error)
	TouchKey(ctx context.Context, digest string, at time.Time) error
	SubKeys(ctx context.Context, objectID string, p store.Page) ([]store.Key, string, error)
	RevokeKey(ctx context.Context, objectID, keyID string, at time.Time, outbox events.Stager, ev events.Pending) (*store.Key, error)
	Rotate(ctx context.Context, objectID, keyID string, next *store.Key, at time.Time, outbox events.Stager, ev events.Pending) (*store.Key, error)
	TakeKeySlot(ctx context.Context, objectID, digest string, max int) error
	FreeKeySlot(ctx context.Context, objectID, digest string, max int) error
}

// AssociationStore holds associations and their deletions.
type AssociationStore interface {
	InsertAssociation(ctx context.Context, a *store.Association) error
	Associations(ctx context.Context, objectID string, p store.Page) ([]store.Association, string, error)
	DeleteAssociation(ctx context.Context, objectID, id string, at time.Time) error
}

// VoucherStore records spent payment vouchers.
type VoucherStore interface {
	UseVoucher(ctx context.Context, voucherID, objectID string, at time.Time) error
	ReleaseVoucher(ctx context.Context, voucherID, objectID string) error
}
