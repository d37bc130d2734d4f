package mongox

import "context"

type unboundedKey struct{}

// Unbounded marks ctx: the queries sent under it may read what a collection holds rather than an
// _id range, for reason (a one-off upgrade step outside the serving path). The end-to-end suite's
// store-shape guard lets such queries pass and refuses every other that the _id index cannot
// serve.
func Unbounded(ctx context.Context, reason string) context.Context {
	return context.WithValue(ctx, unboundedKey{}, reason)
}

// UnboundedReason is the reason Unbounded gave ctx, "" for none.
func UnboundedReason(ctx context.Context) string {
	r, _ := ctx.Value(unboundedKey{}).(string)
	return r
}
