package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

type signedNonce struct {
	ID        string    `bson:"_id"`
	ExpiresAt time.Time `bson:"expires_at"`
}

// ClaimNonce records that the sender used nonce in a signed send; false if it was used before (a
// replay). The record is kept until expiresAt, past which the signature is too old to be accepted
// anyway.
func (s *Store) ClaimNonce(ctx context.Context, senderID, nonce string, expiresAt time.Time) (bool, error) {
	return insertOnce(ctx, s.nonces, signedNonce{ID: senderID + "/" + nonce, ExpiresAt: expiresAt})
}

// SweepNonces deletes the nonces whose signatures can no longer be accepted.
func (s *Store) SweepNonces(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.nonces.DeleteMany(ctx, bson.D{{Key: "expires_at", Value: bson.D{{Key: "$lt", Value: now}}}})
	if err != nil {
		return 0, fmt.Errorf("store signed nonces: %w", err)
	}
	return res.DeletedCount, nil
}
