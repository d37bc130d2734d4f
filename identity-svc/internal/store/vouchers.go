package store

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// UseVoucher records a payment voucher as spent; ErrTaken if it already was.
func (s *Store) UseVoucher(ctx context.Context, voucherID, objectID string, at time.Time) error {
	return s.insert(ctx, Vouchers, bson.D{{Key: "_id", Value: voucherID}, {Key: "object_id", Value: objectID}, {Key: "used_at", Value: at}})
}

// ReleaseVoucher undoes UseVoucher when the claim it paid for failed.
func (s *Store) ReleaseVoucher(ctx context.Context, voucherID, objectID string) error {
	_, err := s.deleteOne(ctx, Vouchers, bson.D{{Key: "_id", Value: voucherID}, {Key: "object_id", Value: objectID}})
	return err
}
